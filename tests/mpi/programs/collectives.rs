//! Data-movement collectives: gather, scatter, allgather, alltoall and their v-, in-place and
//! nonblocking forms, for every type, at several lengths, with roots 0 and last; and bad
//! arguments that every rank detects before any communication.

use crate::checks::Checks;
use crate::for_each_type;
use crate::values::{TestValue, values};
use ferrompi::ErrorKind;
use ferrompi::{Communicator, Error, Mpi, Partition, scope};

/// Rank `r`'s block for rank `to`.
fn block<T: TestValue>(r: i32, to: i32, len: usize) -> Vec<T> {
    values(r as u64 * 1000 + to as u64, len)
}

/// What a root or everyone should hold after gathering each rank's block for `to`.
fn gathered<T: TestValue>(size: i32, to: i32, len: usize) -> Vec<T> {
    (0..size).flat_map(|r| block::<T>(r, to, len)).collect()
}

fn movement<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks, len: usize) {
    let (rank, size) = (comm.rank(), comm.size());
    let name = std::any::type_name::<T>();
    let n = size as usize;
    for root in [0, size - 1] {
        // gather / gather_in_place / igather
        let mine = block::<T>(rank, root, len);
        let mut all = if rank == root {
            vec![T::default(); len * n]
        } else {
            Vec::new()
        };
        t.okay(comm.gather(&mine, &mut all, root), "gather");
        if rank == root {
            t.eq(
                &all,
                &gathered::<T>(size, root, len),
                format!("gather {name} x {len} root {root}"),
            );
        }
        let mut buf = if rank == root {
            let mut b = vec![T::default(); len * n];
            b[rank as usize * len..][..len].clone_from_slice(&mine);
            b
        } else {
            mine.clone()
        };
        let mut ibuf = buf.clone();
        t.okay(comm.gather_in_place(&mut buf, root), "gather_in_place");
        scope(|s| {
            let request = comm.igather_in_place(s, &mut ibuf, root);
            t.okay(t_req(request), "igather_in_place")
        });
        if rank == root {
            t.eq(
                (&buf, &ibuf),
                (
                    &gathered::<T>(size, root, len),
                    &gathered::<T>(size, root, len),
                ),
                format!("gather_in_place and igather_in_place {name}"),
            );
        }
        let mut all2 = if rank == root {
            vec![T::default(); len * n]
        } else {
            Vec::new()
        };
        scope(|s| t.okay(t_req(comm.igather(s, &mine, &mut all2, root)), "igather"));
        if rank == root {
            t.eq(
                &all2,
                &gathered::<T>(size, root, len),
                format!("igather {name}"),
            );
        }

        // scatter / scatter_in_place / iscatter: the root's block for rank j goes to j.
        let source = if rank == root {
            (0..size).flat_map(|to| block::<T>(root, to, len)).collect()
        } else {
            Vec::new()
        };
        let mut got = vec![T::default(); len];
        t.okay(comm.scatter(&source, &mut got, root), "scatter");
        t.eq(
            &got,
            &block::<T>(root, rank, len),
            format!("scatter {name} x {len} root {root}"),
        );
        let mut inplace = if rank == root {
            source.clone()
        } else {
            vec![T::default(); len]
        };
        let mut iinplace = inplace.clone();
        t.okay(
            comm.scatter_in_place(&mut inplace, root),
            "scatter_in_place",
        );
        scope(|s| {
            let request = comm.iscatter_in_place(s, &mut iinplace, root);
            t.okay(t_req(request), "iscatter_in_place")
        });
        for (form, result) in [
            ("scatter_in_place", inplace),
            ("iscatter_in_place", iinplace),
        ] {
            let mine_now = if rank == root {
                result[rank as usize * len..][..len].to_vec()
            } else {
                result
            };
            t.eq(
                &mine_now,
                &block::<T>(root, rank, len),
                format!("{form} {name}"),
            );
        }
        let mut got2 = vec![T::default(); len];
        scope(|s| {
            t.okay(
                t_req(comm.iscatter(s, &source, &mut got2, root)),
                "iscatter",
            )
        });
        t.eq(
            &got2,
            &block::<T>(root, rank, len),
            format!("iscatter {name}"),
        );

        // gatherv / scatterv with blocks of different lengths: rank r has len + r values.
        let lengths: Vec<usize> = (0..n).map(|r| len + r).collect();
        let blocks = t.okay(Partition::<T>::from_counts(&lengths), "partition");
        let mine_v = block::<T>(rank, root, len + rank as usize);
        let mut all_v = if rank == root {
            vec![T::default(); blocks.extent()]
        } else {
            Vec::new()
        };
        t.okay(comm.gatherv(&mine_v, &mut all_v, &blocks, root), "gatherv");
        if rank == root {
            let want: Vec<T> = (0..size)
                .flat_map(|r| block::<T>(r, root, len + r as usize))
                .collect();
            t.eq(&all_v, &want, format!("gatherv {name}"));
        }
        let source_v: Vec<T> = if rank == root {
            (0..size)
                .flat_map(|to| block::<T>(root, to, len + to as usize))
                .collect()
        } else {
            Vec::new()
        };
        let mut got_v = vec![T::default(); len + rank as usize];
        t.okay(
            comm.scatterv(&source_v, &mut got_v, &blocks, root),
            "scatterv",
        );
        t.eq(
            &got_v,
            &block::<T>(root, rank, len + rank as usize),
            format!("scatterv {name}"),
        );
    }

    // allgather / in place / iallgather
    let mine = block::<T>(rank, 0, len);
    let want = gathered::<T>(size, 0, len);
    let mut all = vec![T::default(); len * n];
    t.okay(comm.allgather(&mine, &mut all), "allgather");
    t.eq(&all, &want, format!("allgather {name} x {len}"));
    let mut buf = vec![T::default(); len * n];
    buf[rank as usize * len..][..len].clone_from_slice(&mine);
    let mut ibuf = buf.clone();
    t.okay(comm.allgather_in_place(&mut buf), "allgather_in_place");
    t.eq(&buf, &want, format!("allgather_in_place {name}"));
    scope(|s| {
        t.okay(
            t_req(comm.iallgather_in_place(s, &mut ibuf)),
            "iallgather_in_place",
        )
    });
    t.eq(&ibuf, &want, format!("iallgather_in_place {name}"));
    let mut all2 = vec![T::default(); len * n];
    scope(|s| t.okay(t_req(comm.iallgather(s, &mine, &mut all2)), "iallgather"));
    t.eq(&all2, &want, format!("iallgather {name}"));

    // allgatherv (blocks in reverse rank order, to exercise displacements) / in place / nonblocking
    let lengths: Vec<usize> = (0..n).map(|r| len + (r % 3)).collect();
    let mut displs = vec![0usize; n];
    let mut offset = 0;
    for r in (0..n).rev() {
        displs[r] = offset;
        offset += lengths[r];
    }
    let blocks = t.okay(
        Partition::<T>::from_counts_and_displacements(&lengths, &displs),
        "partition",
    );
    let mine_v = block::<T>(rank, 0, lengths[rank as usize]);
    let mut want_v = vec![T::default(); blocks.extent()];
    for r in 0..n {
        want_v[displs[r]..][..lengths[r]].clone_from_slice(&block::<T>(r as i32, 0, lengths[r]));
    }
    let mut all_v = vec![T::default(); blocks.extent()];
    t.okay(comm.allgatherv(&mine_v, &mut all_v, &blocks), "allgatherv");
    t.eq(&all_v, &want_v, format!("allgatherv {name}"));
    let mut buf_v = vec![T::default(); blocks.extent()];
    buf_v[displs[rank as usize]..][..lengths[rank as usize]].clone_from_slice(&mine_v);
    let mut ibuf_v = buf_v.clone();
    t.okay(
        comm.allgatherv_in_place(&mut buf_v, &blocks),
        "allgatherv_in_place",
    );
    t.eq(&buf_v, &want_v, format!("allgatherv_in_place {name}"));
    scope(|s| {
        let request = comm.iallgatherv_in_place(s, &mut ibuf_v, &blocks);
        t.okay(t_req(request), "iallgatherv_in_place")
    });
    t.eq(&ibuf_v, &want_v, format!("iallgatherv_in_place {name}"));
    let mut all_v2 = vec![T::default(); blocks.extent()];
    scope(|s| {
        t.okay(
            t_req(comm.iallgatherv(s, &mine_v, &mut all_v2, &blocks)),
            "iallgatherv",
        )
    });
    t.eq(&all_v2, &want_v, format!("iallgatherv {name}"));

    // alltoall / in place / nonblocking: block j of rank i's send is block(i, j).
    let send: Vec<T> = (0..size).flat_map(|to| block::<T>(rank, to, len)).collect();
    let want: Vec<T> = (0..size)
        .flat_map(|from| block::<T>(from, rank, len))
        .collect();
    let mut recv = vec![T::default(); len * n];
    t.okay(comm.alltoall(&send, &mut recv), "alltoall");
    t.eq(&recv, &want, format!("alltoall {name} x {len}"));
    let mut buf = send.clone();
    t.okay(comm.alltoall_in_place(&mut buf), "alltoall_in_place");
    t.eq(&buf, &want, format!("alltoall_in_place {name}"));
    let mut buf = send.clone();
    scope(|s| {
        t.okay(
            t_req(comm.ialltoall_in_place(s, &mut buf)),
            "ialltoall_in_place",
        )
    });
    t.eq(&buf, &want, format!("ialltoall_in_place {name}"));
    let mut recv2 = vec![T::default(); len * n];
    scope(|s| t.okay(t_req(comm.ialltoall(s, &send, &mut recv2)), "ialltoall"));
    t.eq(&recv2, &want, format!("ialltoall {name}"));

    // alltoallv: rank i sends len + i + j values to rank j.
    let send_lengths: Vec<usize> = (0..n).map(|j| len + rank as usize + j).collect();
    let recv_lengths: Vec<usize> = (0..n).map(|i| len + i + rank as usize).collect();
    let send_blocks = t.okay(Partition::<T>::from_counts(&send_lengths), "partition");
    let recv_blocks = t.okay(Partition::<T>::from_counts(&recv_lengths), "partition");
    let send: Vec<T> = (0..size)
        .flat_map(|to| block::<T>(rank, to, send_lengths[to as usize]))
        .collect();
    let want: Vec<T> = (0..size)
        .flat_map(|from| block::<T>(from, rank, recv_lengths[from as usize]))
        .collect();
    let mut recv = vec![T::default(); recv_blocks.extent()];
    t.okay(
        comm.alltoallv(&send, &send_blocks, &mut recv, &recv_blocks),
        "alltoallv",
    );
    t.eq(&recv, &want, format!("alltoallv {name}"));
    let mut recv2 = vec![T::default(); recv_blocks.extent()];
    scope(|s| {
        t.okay(
            t_req(comm.ialltoallv(s, &send, &send_blocks, &mut recv2, &recv_blocks)),
            "ialltoallv",
        )
    });
    t.eq(&recv2, &want, format!("ialltoallv {name}"));

    // ibcast from the last rank.
    let root = size - 1;
    let mut b = if rank == root {
        block::<T>(root, 7, len)
    } else {
        vec![T::default(); len]
    };
    scope(|s| t.okay(t_req(comm.ibcast(s, &mut b, root)), "ibcast"));
    t.eq(&b, &block::<T>(root, 7, len), format!("ibcast {name}"));
}

/// Waits for a nonblocking collective right away (the tests check contents after the scope).
fn t_req(request: ferrompi::Result<ferrompi::Request<'_>>) -> ferrompi::Result<ferrompi::Status> {
    request?.wait()
}

fn all_lengths<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks) {
    for len in [0, 1, 1000] {
        movement::<T>(comm, t, len);
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    for_each_type!(all_lengths(&world, t));
    movement::<u8>(&world, t, 1 << 20);
    movement::<f64>(&world, t, (1 << 20) / 8);

    // Nonblocking v-forms.
    let n = size as usize;
    let lengths: Vec<usize> = (0..n).map(|r| 2 + r).collect();
    let blocks = t.okay(Partition::<u32>::from_counts(&lengths), "partition");
    let mine: Vec<u32> = (0..2 + rank as u32)
        .map(|i| rank as u32 * 100 + i)
        .collect();
    let want: Vec<u32> = (0..size as u32)
        .flat_map(|r| (0..2 + r).map(move |i| r * 100 + i))
        .collect();
    let mut at_root = if rank == size - 1 {
        vec![0u32; blocks.extent()]
    } else {
        Vec::new()
    };
    scope(|s| {
        t.okay(
            t_req(world.igatherv(s, &mine, &mut at_root, &blocks, size - 1)),
            "igatherv",
        )
    });
    if rank == size - 1 {
        t.eq(&at_root, &want, "igatherv content");
    }
    let mut back = vec![0u32; 2 + rank as usize];
    scope(|s| {
        t.okay(
            t_req(world.iscatterv(s, &want, &mut back, &blocks, 0)),
            "iscatterv",
        )
    });
    t.eq(&back, &mine, "iscatterv content");
    let contribution: Vec<u32> = vec![1; blocks.extent()];
    let mut reduced = vec![0u32; 2 + rank as usize];
    scope(|s| {
        t.okay(
            t_req(world.ireduce_scatter(s, &contribution, &mut reduced, &blocks, ferrompi::Sum)),
            "ireduce_scatter",
        )
    });
    t.eq(
        reduced,
        vec![size as u32; 2 + rank as usize],
        "ireduce_scatter content",
    );

    // In-place v-forms.
    let mut gathered_in_place = if rank == size - 1 {
        let mut b = vec![0u32; blocks.extent()];
        let at: usize = lengths[..rank as usize].iter().sum();
        b[at..at + mine.len()].copy_from_slice(&mine);
        b
    } else {
        mine.clone()
    };
    let mut igathered = gathered_in_place.clone();
    t.okay(
        world.gatherv_in_place(&mut gathered_in_place, &blocks, size - 1),
        "gatherv_in_place",
    );
    scope(|s| {
        let request = world.igatherv_in_place(s, &mut igathered, &blocks, size - 1);
        t.okay(t_req(request), "igatherv_in_place")
    });
    if rank == size - 1 {
        t.eq(&gathered_in_place, &want, "gatherv_in_place content");
        t.eq(&igathered, &want, "igatherv_in_place content");
    }
    let mut scattered_in_place = if rank == 0 {
        want.clone()
    } else {
        vec![0u32; 2 + rank as usize]
    };
    let mut iscattered = scattered_in_place.clone();
    t.okay(
        world.scatterv_in_place(&mut scattered_in_place, &blocks, 0),
        "scatterv_in_place",
    );
    scope(|s| {
        let request = world.iscatterv_in_place(s, &mut iscattered, &blocks, 0);
        t.okay(t_req(request), "iscatterv_in_place")
    });
    for (form, result) in [
        ("scatterv_in_place", scattered_in_place),
        ("iscatterv_in_place", iscattered),
    ] {
        let own = if rank == 0 {
            result[..2].to_vec()
        } else {
            result
        };
        t.eq(&own, &mine, format!("{form} content"));
    }
    let mut rs = vec![1u32; blocks.extent()];
    let mut irs = rs.clone();
    t.okay(
        world.reduce_scatter_in_place(&mut rs, &blocks, ferrompi::Sum),
        "reduce_scatter_in_place",
    );
    scope(|s| {
        let request = world.ireduce_scatter_in_place(s, &mut irs, &blocks, ferrompi::Sum);
        t.okay(t_req(request), "ireduce_scatter_in_place")
    });
    for (form, result) in [
        ("reduce_scatter_in_place", rs),
        ("ireduce_scatter_in_place", irs),
    ] {
        t.eq(
            &result[..2 + rank as usize],
            &vec![size as u32; 2 + rank as usize][..],
            format!("{form} content"),
        );
    }
    let uniform = t.okay(Partition::<u32>::uniform(n, 3), "partition");
    let mut a2a: Vec<u32> = (0..size as u32)
        .flat_map(|to| [rank as u32, to, 7])
        .collect();
    let mut ia2a = a2a.clone();
    t.okay(
        world.alltoallv_in_place(&mut a2a, &uniform),
        "alltoallv_in_place",
    );
    scope(|s| {
        let request = world.ialltoallv_in_place(s, &mut ia2a, &uniform);
        t.okay(t_req(request), "ialltoallv_in_place")
    });
    let want_a2a: Vec<u32> = (0..size as u32)
        .flat_map(|from| [from, rank as u32, 7])
        .collect();
    t.eq(&a2a, &want_a2a, "alltoallv_in_place content");
    t.eq(&ia2a, &want_a2a, "ialltoallv_in_place content");

    // alltoallw: to even ranks three i32s, to odd ranks two f64s, packed in byte buffers.
    let block_for = |peer: i32, offset: usize| {
        if peer % 2 == 0 {
            ferrompi::TypedBlock::of::<i32>(3, offset)
        } else {
            ferrompi::TypedBlock::of::<f64>(2, offset)
        }
    };
    let bytes_for = |peer: i32| if peer % 2 == 0 { 12 } else { 16 };
    let mut offset = 0;
    let mut send = Vec::new();
    let mut send_blocks = Vec::new();
    for peer in 0..size {
        send_blocks.push(block_for(peer, offset));
        if peer % 2 == 0 {
            send.extend(bytemuck::cast_slice::<i32, u8>(&[rank, peer, -1]));
        } else {
            send.extend(bytemuck::cast_slice::<f64, u8>(&[
                f64::from(rank),
                f64::from(peer) + 0.5,
            ]));
        }
        offset += bytes_for(peer);
    }
    // Everything this rank receives has its own type: i32 if it is even, f64 if odd.
    let recv_blocks: Vec<_> = (0..size)
        .map(|from| block_for(rank, from as usize * bytes_for(rank)))
        .collect();
    let send_part = t.okay(
        ferrompi::TypedPartition::new(&send_blocks),
        "typed partition",
    );
    let recv_part = t.okay(
        ferrompi::TypedPartition::new(&recv_blocks),
        "typed partition",
    );
    let mut recv = vec![0u8; recv_part.extent()];
    t.okay(
        world.alltoallw(&send, &send_part, &mut recv, &recv_part),
        "alltoallw",
    );
    let check_w = |t: &mut Checks, recv: &[u8], what: &str| {
        for from in 0..size {
            let at = from as usize * bytes_for(rank);
            let chunk = &recv[at..at + bytes_for(rank)];
            if rank % 2 == 0 {
                let v: Vec<i32> = chunk
                    .chunks(4)
                    .map(|c| i32::from_ne_bytes(c.try_into().expect("4 bytes")))
                    .collect();
                t.eq(v, vec![from, rank, -1], what);
            } else {
                let v: Vec<f64> = chunk
                    .chunks(8)
                    .map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                t.eq(v, vec![f64::from(from), f64::from(rank) + 0.5], what);
            }
        }
    };
    check_w(t, &recv, "alltoallw content");
    let mut recv2 = vec![0u8; recv_part.extent()];
    scope(|s| {
        t.okay(
            t_req(world.ialltoallw(s, &send, &send_part, &mut recv2, &recv_part)),
            "ialltoallw",
        )
    });
    check_w(t, &recv2, "ialltoallw content");
    // In place, every block is two f64s in both directions.
    let f64_blocks: Vec<_> = (0..size)
        .map(|p| ferrompi::TypedBlock::of::<f64>(2, p as usize * 16))
        .collect();
    let f64_part = t.okay(
        ferrompi::TypedPartition::new(&f64_blocks),
        "typed partition",
    );
    let mut inplace: Vec<u8> = (0..size)
        .flat_map(|to| bytemuck::cast_slice::<f64, u8>(&[f64::from(rank), f64::from(to)]).to_vec())
        .collect();
    let mut iinplace = inplace.clone();
    t.okay(
        world.alltoallw_in_place(&mut inplace, &f64_part),
        "alltoallw_in_place",
    );
    scope(|s| {
        let request = world.ialltoallw_in_place(s, &mut iinplace, &f64_part);
        t.okay(t_req(request), "ialltoallw_in_place")
    });
    let want_w: Vec<f64> = (0..size)
        .flat_map(|from| [f64::from(from), f64::from(rank)])
        .collect();
    for (form, bytes) in [
        ("alltoallw_in_place", inplace),
        ("ialltoallw_in_place", iinplace),
    ] {
        let got: Vec<f64> = bytes
            .chunks(8)
            .map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect();
        t.eq(got, want_w.clone(), format!("{form} content"));
    }
    // Overlapping typed blocks are a valid partition; only a call writing them refuses it
    // (tests/mpi/programs/conformance.rs).
    t.okay(
        ferrompi::TypedPartition::new(&[
            ferrompi::TypedBlock::of::<f64>(2, 0),
            ferrompi::TypedBlock::of::<f64>(1, 8),
        ]),
        "overlapping typed blocks",
    );

    // Bad arguments every rank detects, so no rank enters MPI and nobody hangs.
    let mut four = [0i32; 4];
    let wrong_root = |e: &Error| matches!(e.kind(), ErrorKind::InvalidRank { role: "root", .. });
    t.err(
        world.gather(&[1], &mut four, size),
        wrong_root,
        "gather root == size",
    );
    t.err(
        world.scatter(&[1], &mut four, -1),
        wrong_root,
        "scatter root -1",
    );
    let mut short = vec![0i32; 4 * size as usize - 1];
    t.err(
        world.allgather(&four, &mut short),
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        "allgather short recv",
    );
    if size > 1 {
        t.err(
            world.alltoall(&short, &mut short.clone()),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "alltoall indivisible",
        );
    }
    let mut other = vec![0i32; short.len() + 1];
    t.err(
        world.alltoall(&short, &mut other),
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        "alltoall unequal buffers",
    );
    let wrong_size = t.okay(
        Partition::<i32>::from_counts(&vec![1; size as usize + 1]),
        "partition",
    );
    t.err(
        world.allgatherv(&[1], &mut four, &wrong_size),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "partition size",
    );
    let blocks = t.okay(Partition::<i32>::uniform(size as usize, 2), "partition");
    t.err(
        world.allgatherv(&[1, 2, 3], &mut vec![0; 2 * size as usize], &blocks),
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        "own block length",
    );
    t.err(
        world.allgatherv(&[1, 2], &mut [0; 1], &blocks),
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        "recv shorter than partition",
    );
    // Root-only checks: only the root calls, and only the root could have entered MPI.
    if rank == 0 {
        t.err(
            world.gather(&[1, 2], &mut four[..1], 0),
            |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
            "gather recv at root",
        );
    }
    t.okay(world.barrier(), "everyone continues");
}
