//! Layouts: every `DerivedType` constructor checked against the elements a hand-written loop
//! selects (through `MPI_Pack`), layouts sent and received in place by point-to-point and the
//! collectives, one-sided calls on layouts, and 3-D halo faces at odd sizes.

use super::{Padded, padded};
use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{DerivedType, Distribution, Equivalence, Error, Mpi, Order, Window, window::Assert};
/// Fills `n` values with their index, packs `count` copies of `ty` over them, and returns
/// the packed values in order: the elements the type selects.
fn selected(
    world: &ferrompi::Communicator<'_>,
    ty: &DerivedType<'_>,
    n: usize,
    count: usize,
) -> Result<Vec<f64>, Error> {
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let view = ty.view(&values, count)?;
    let mut bytes = vec![0u8; world.pack_size(&view)?];
    let mut at = 0;
    world.pack(&view, &mut bytes, &mut at)?;
    let mut back = vec![0.0f64; at / 8];
    let mut read = 0;
    world.unpack(&bytes[..at], &mut read, &mut back[..])?;
    Ok(back)
}

pub(super) fn builders(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let f = f64::datatype();
    let idx = |v: &[usize]| v.iter().map(|&i| i as f64).collect::<Vec<f64>>();
    type Case<'m> = (
        &'static str,
        Result<DerivedType<'m>, Error>,
        usize,
        usize,
        Vec<f64>,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "contiguous",
            DerivedType::contiguous(mpi, 3, f),
            8,
            2,
            idx(&[0, 1, 2, 3, 4, 5]),
        ),
        (
            "vector",
            DerivedType::vector(mpi, 3, 2, 5, f),
            12,
            1,
            idx(&[0, 1, 5, 6, 10, 11]),
        ),
        (
            "hvector",
            DerivedType::hvector(mpi, 2, 1, 24, f),
            8,
            1,
            idx(&[0, 3]),
        ),
        (
            "indexed",
            DerivedType::indexed(mpi, &[2, 1], &[1, 6], f),
            8,
            1,
            idx(&[1, 2, 6]),
        ),
        (
            "hindexed",
            DerivedType::hindexed(mpi, &[1, 2], &[40, 8], f),
            8,
            1,
            idx(&[5, 1, 2]),
        ),
        (
            "indexed_block",
            DerivedType::indexed_block(mpi, 2, &[4, 0], f),
            8,
            1,
            idx(&[4, 5, 0, 1]),
        ),
        (
            "hindexed_block",
            DerivedType::hindexed_block(mpi, 1, &[16, 56], f),
            8,
            1,
            idx(&[2, 7]),
        ),
        (
            "subarray C",
            DerivedType::subarray(mpi, &[3, 4], &[2, 2], &[1, 1], Order::C, f),
            12,
            1,
            idx(&[5, 6, 9, 10]),
        ),
        (
            "subarray Fortran",
            DerivedType::subarray(mpi, &[3, 4], &[2, 2], &[1, 1], Order::Fortran, f),
            12,
            1,
            idx(&[4, 5, 7, 8]),
        ),
        (
            "resized",
            DerivedType::resized(mpi, f, 0, 24),
            8,
            3,
            idx(&[0, 3, 6]),
        ),
        (
            "darray block",
            DerivedType::darray(
                mpi,
                2,
                1,
                &[8],
                &[Distribution::Block(None)],
                &[2],
                Order::C,
                f,
            ),
            8,
            1,
            idx(&[4, 5, 6, 7]),
        ),
        (
            "darray cyclic(2)",
            DerivedType::darray(
                mpi,
                2,
                0,
                &[8],
                &[Distribution::Cyclic(Some(2))],
                &[2],
                Order::C,
                f,
            ),
            8,
            1,
            idx(&[0, 1, 4, 5]),
        ),
    ];
    for (name, made, n, count, want) in cases {
        let ty = t.okay(made, format!("{name}: made"));
        t.eq_ok(
            selected(world, &ty, n, count),
            want,
            format!("{name}: selects what C would"),
        );
    }
    // A struct of two types, a vector of a vector, and a dup: against their pack too.
    let column = t.okay(DerivedType::vector(mpi, 3, 1, 4, f), "column");
    let columns = t.okay(
        DerivedType::resized(mpi, &column, 0, 8),
        "column, one f64 apart",
    );
    let two = t.okay(DerivedType::contiguous(mpi, 2, &columns), "two columns");
    t.eq_ok(
        selected(world, &two, 12, 1),
        idx(&[0, 4, 8, 1, 5, 9]),
        "nested: two columns",
    );
    let copy = t.okay(two.dup(), "dup");
    t.eq(copy.bounds(), two.bounds(), "dup: same bounds");
    t.eq_ok(
        selected(world, &copy, 12, 1),
        idx(&[0, 4, 8, 1, 5, 9]),
        "dup selects the same",
    );
    let mixed = t.okay(
        DerivedType::create_struct(mpi, &[1, 2], &[16, 0], &[f.into(), i32::datatype().into()]),
        "create_struct",
    );
    let b = mixed.bounds();
    t.eq(
        (b.size, b.true_lb, b.true_extent),
        (16, 0, 24),
        "create_struct: bounds",
    );
    let three_d = t.okay(
        DerivedType::darray(
            mpi,
            4,
            3,
            &[4, 6],
            &[Distribution::Block(None), Distribution::Block(None)],
            &[2, 2],
            Order::C,
            f,
        ),
        "darray 2 x 2 grid",
    );
    // Process 3 of a 2 x 2 grid holds rows 2..4, columns 3..6.
    t.eq_ok(
        selected(world, &three_d, 24, 1),
        idx(&[15, 16, 17, 21, 22, 23]),
        "darray: the last process's quarter",
    );
}

pub(super) fn layouts(
    mpi: &Mpi,
    world: &ferrompi::Communicator<'_>,
    t: &mut Checks,
    next: i32,
    prev: i32,
) {
    let rank = world.rank();
    // A 4 x 5 row-major matrix; column 2 goes to the next rank's column 4.
    let column = t.okay(
        DerivedType::vector(mpi, 4, 1, 5, f64::datatype()),
        "column type",
    );
    let matrix: Vec<f64> = (0..20)
        .map(|i| f64::from(rank) * 100.0 + f64::from(i))
        .collect();
    let mut into = vec![-1.0f64; 20];
    let send = t.okay(column.view(&matrix[2..], 1), "view of column 2");
    let recv = t.okay(column.view_mut(&mut into[4..], 1), "view of column 4");
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv_view(s, recv, prev, 10)?;
        world.send_view(send, next, 10)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "column sent, received nonblocking");
    let want: Vec<f64> = (0..20)
        .map(|i| {
            if i % 5 == 4 {
                f64::from(prev) * 100.0 + f64::from(i - 2)
            } else {
                -1.0
            }
        })
        .collect();
    t.eq(into.clone(), want.clone(), "only column 4 was written");
    // The other way round: isend_view, recv_view, and ssend_view into a plain slice.
    let mut again = vec![-1.0f64; 20];
    let result = ferrompi::scope(|s| {
        let sending = world.isend_view(s, column.view(&matrix[2..], 1)?, next, 11)?;
        world.recv_view(column.view_mut(&mut again[4..], 1)?, prev, 11)?;
        sending.wait().map(drop)
    });
    t.okay(result, "isend_view + recv_view");
    t.eq(again, want, "isend_view + recv_view: only column 4");
    let mut flat = [0.0f64; 4];
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv(s, &mut flat, prev, 12)?;
        world.ssend_view(column.view(&matrix, 1)?, next, 12)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "ssend_view into a slice");
    let p = f64::from(prev) * 100.0;
    t.eq(
        flat,
        [p, p + 5.0, p + 10.0, p + 15.0],
        "a column arrives as a run of values",
    );

    // Persistent: column 2 of a matrix the request owns, to the next rank's column 4, at
    // every start (subarrays carry the column's offset).
    let at = |column: usize| {
        DerivedType::subarray(
            mpi,
            &[4, 5],
            &[4, 1],
            &[0, column],
            Order::C,
            f64::datatype(),
        )
    };
    let (two, four) = (t.okay(at(2), "column 2"), t.okay(at(4), "column 4"));
    let mut sending = t.okay(
        two.owned_view(matrix.clone(), 1)
            .and_then(|view| world.send_init_view(view, next, 13)),
        "send_init_view",
    );
    let mut receiving = t.okay(
        four.owned_view(vec![-1.0f64; 20], 1)
            .and_then(|view| world.recv_init_view(view, prev, 13)),
        "recv_init_view",
    );
    for round in 0..3 {
        for (i, x) in sending.buffer_mut().iter_mut().enumerate() {
            *x = f64::from(rank) * 100.0 + f64::from(round * 20 + i as i32);
        }
        let result = receiving.start().and_then(|active| {
            sending.start()?.wait()?;
            active.wait()
        });
        t.okay(result, format!("persistent column exchange, round {round}"));
        let want: Vec<f64> = (0..20)
            .map(|i| {
                if i % 5 == 4 {
                    f64::from(prev) * 100.0 + f64::from(round * 20 + i - 2)
                } else {
                    -1.0
                }
            })
            .collect();
        t.eq(
            receiving.buffer().to_vec(),
            want,
            format!("round {round}: only column 4 was written"),
        );
    }
    t.ok(
        matches!(
            column
                .owned_view(vec![0.0f64; 20], 2)
                .as_ref()
                .map_err(ferrompi::Error::kind),
            Err(ErrorKind::InvalidArgument { .. })
        ) && matches!(
            four.owned_view(vec![0.0f64; 19], 1)
                .as_ref()
                .map_err(ferrompi::Error::kind),
            Err(ErrorKind::InvalidArgument { .. })
        ),
        "an owned view reaching past its buffer is refused",
    );
    drop((sending, receiving));

    // A struct field of every record: the `value` of each Padded, by hvector.
    let values = t.okay(
        DerivedType::hvector(
            mpi,
            3,
            1,
            std::mem::size_of::<Padded>() as isize,
            f64::datatype(),
        ),
        "hvector over records",
    );
    // Shifted to the field: one struct block of the hvector at the field's offset.
    let base = std::mem::offset_of!(Padded, value) as isize;
    let field = t.okay(
        DerivedType::create_struct(mpi, &[1], &[base], &[(&values).into()]),
        "the hvector at the field's offset",
    );
    let records: Vec<Padded> = (0..3).map(|k| padded(rank, k)).collect();
    let mut got = [0.0f64; 3];
    let view = t.okay(field.view(&records, 1), "view of each record's value");
    t.okay(
        world.sendrecv_view(view, next, 13, &mut got, prev, 13),
        "sendrecv_view of a field",
    );
    t.eq(
        got.to_vec(),
        (0..3).map(|k| padded(prev, k).value).collect::<Vec<_>>(),
        "each record's value",
    );

    // The equal-block collectives on views: a distributed transpose by alltoall (columns
    // sent, rows received), columns gathered, scattered and allgathered.
    let n = world.size() as usize;
    let me = rank as usize;
    let col = t.okay(
        DerivedType::vector(mpi, n, 1, n as isize, f64::datatype()),
        "n x n column",
    );
    let cols = t.okay(
        DerivedType::resized(mpi, &col, 0, 8),
        "columns one f64 apart",
    );
    let row = t.okay(DerivedType::contiguous(mpi, n, f64::datatype()), "row");
    let square: Vec<f64> = (0..n * n).map(|k| (me * 1000 + k) as f64).collect();
    let mut rows = vec![-1.0f64; n * n];
    let sent = cols.view(&square, n).and_then(|send| {
        let recv = row.view_mut(&mut rows, n)?;
        world.alltoall_view(send, recv)
    });
    t.okay(sent, "alltoall_view");
    t.ok(
        (0..n).all(|q| (0..n).all(|i| rows[q * n + i] == (q * 1000 + i * n + me) as f64)),
        "alltoall_view transposed: row q is column `me` of rank q",
    );
    let mut gathered = vec![-1.0f64; n * n];
    let root = (n - 1) as i32;
    let sent = col.view(&square[me % n..], 1).and_then(|send| {
        let recv = row.view_mut(&mut gathered, if rank == root { n } else { 0 })?;
        world.gather_view(send, recv, root)
    });
    t.okay(sent, "gather_view");
    if rank == root {
        t.ok(
            (0..n)
                .all(|q| (0..n).all(|i| gathered[q * n + i] == (q * 1000 + i * n + q % n) as f64)),
            "gather_view: column q of rank q, in rank order",
        );
    }
    let mut mine = vec![-1.0f64; n];
    let sent = cols
        .view(&square, if rank == root { n } else { 0 })
        .and_then(|send| {
            let recv = row.view_mut(&mut mine, 1)?;
            world.scatter_view(send, recv, root)
        });
    t.okay(sent, "scatter_view");
    t.ok(
        (0..n).all(|i| mine[i] == (n - 1) as f64 * 1000.0 + (i * n + me) as f64),
        "scatter_view: column `me` of the root's matrix",
    );
    let mut everyone = vec![-1.0f64; n * n];
    let sent = col.view(&square, 1).and_then(|send| {
        let recv = row.view_mut(&mut everyone, n)?;
        world.allgather_view(send, recv)
    });
    t.okay(sent, "allgather_view");
    t.ok(
        (0..n).all(|q| (0..n).all(|i| everyone[q * n + i] == (q * 1000 + i * n) as f64)),
        "allgather_view: column 0 of every rank",
    );
    // The same four, started in a scope and waited for together: the same results.
    let (mut rows2, mut gathered2) = (vec![-1.0f64; n * n], vec![-1.0f64; n * n]);
    let (mut mine2, mut everyone2) = (vec![-1.0f64; n], vec![-1.0f64; n * n]);
    let started = ferrompi::scope(|s| {
        let transpose =
            world.ialltoall_view(s, cols.view(&square, n)?, row.view_mut(&mut rows2, n)?)?;
        let gather = world.igather_view(
            s,
            col.view(&square[me % n..], 1)?,
            row.view_mut(&mut gathered2, if rank == root { n } else { 0 })?,
            root,
        )?;
        let scatter = world.iscatter_view(
            s,
            cols.view(&square, if rank == root { n } else { 0 })?,
            row.view_mut(&mut mine2, 1)?,
            root,
        )?;
        let allgather =
            world.iallgather_view(s, col.view(&square, 1)?, row.view_mut(&mut everyone2, n)?)?;
        let mut all = ferrompi::RequestSet::with_capacity(s, 4);
        for request in [transpose, gather, scatter, allgather] {
            all.push(request);
        }
        all.wait_all()
    });
    t.okay(
        started,
        "ialltoall_view, igather_view, iscatter_view, iallgather_view",
    );
    t.eq(rows2, rows.clone(), "ialltoall_view: as alltoall_view");
    if rank == root {
        t.eq(gathered2, gathered.clone(), "igather_view: as gather_view");
    }
    t.eq(mine2, mine.clone(), "iscatter_view: as scatter_view");
    t.eq(
        everyone2,
        everyone.clone(),
        "iallgather_view: as allgather_view",
    );
    if n > 1 {
        let mut odd = vec![0.0f64; (n + 1) * n];
        let refused = ferrompi::scope(|s| {
            world
                .ialltoall_view(s, cols.view(&square, n)?, row.view_mut(&mut odd, n + 1)?)
                .map(drop)
        });
        t.ok(
            matches!(
                refused.as_ref().map_err(ferrompi::Error::kind),
                Err(ErrorKind::InvalidArgument { .. })
            ),
            "ialltoall_view: a receive view that does not divide among the ranks",
        );
    }

    // Persistent: the same four set up once over buffers the requests own, started twice.
    let at_root = |len: usize| if rank == root { len } else { 0 };
    let transpose = cols
        .owned_view(square.clone(), n)
        .and_then(|send| Ok((send, row.owned_view(vec![-1.0f64; n * n], n)?)))
        .and_then(|(send, recv)| world.alltoall_init_view(send, recv));
    let gather = col
        .owned_view(square.clone(), 1)
        .and_then(|send| {
            Ok((
                send,
                row.owned_view(vec![-1.0f64; at_root(n * n)], at_root(n))?,
            ))
        })
        .and_then(|(send, recv)| world.gather_init_view(send, recv, root));
    let scatter = cols
        .owned_view(square[..at_root(n * n)].to_vec(), at_root(n))
        .and_then(|send| Ok((send, row.owned_view(vec![-1.0f64; n], 1)?)))
        .and_then(|(send, recv)| world.scatter_init_view(send, recv, root));
    let allgather = col
        .owned_view(square.clone(), 1)
        .and_then(|send| Ok((send, row.owned_view(vec![-1.0f64; n * n], n)?)))
        .and_then(|(send, recv)| world.allgather_init_view(send, recv));
    let mut transpose = t.okay(transpose, "alltoall_init_view");
    let mut gather = t.okay(gather, "gather_init_view");
    let mut scatter = t.okay(scatter, "scatter_init_view");
    let mut allgather = t.okay(allgather, "allgather_init_view");
    for round in 0..2 {
        let done = transpose.start().and_then(|a| a.wait()).and_then(|_| {
            gather.start()?.wait()?;
            scatter.start()?.wait()?;
            allgather.start()?.wait()
        });
        t.okay(
            done,
            format!("persistent collectives on layouts, round {round}"),
        );
        t.eq(
            transpose.recv().to_vec(),
            rows.clone(),
            "alltoall_init_view: as alltoall_view",
        );
        if rank == root {
            t.ok(
                (0..n)
                    .all(|q| (0..n).all(|i| gather.recv()[q * n + i] == (q * 1000 + i * n) as f64)),
                "gather_init_view: column 0 of every rank, in rank order",
            );
        }
        t.eq(
            scatter.recv().to_vec(),
            mine.clone(),
            "scatter_init_view: as scatter_view",
        );
        t.eq(
            allgather.recv().to_vec(),
            everyone.clone(),
            "allgather_init_view: as allgather_view",
        );
    }
    drop((transpose, gather, scatter, allgather));

    let mut wide = vec![0.0f64; (n + 1) * n];
    let recv = t.okay(row.view_mut(&mut wide, n + 1), "a view of n + 1 rows");
    let send = t.okay(col.view(&square, 1), "a column");
    let result = world.allgather_view(send, recv);
    if n > 1 {
        t.ok(
            matches!(
                result.as_ref().map_err(ferrompi::Error::kind),
                Err(ErrorKind::InvalidArgument { .. })
            ),
            "a receive view that does not divide among the ranks",
        );
    } else {
        t.okay(result, "n + 1 rows divide among one rank");
    }

    // bcast_view: the interior of a 4 x 4 grid from the last rank.
    let interior = t.okay(
        DerivedType::subarray(mpi, &[4, 4], &[2, 2], &[1, 1], Order::C, i32::datatype()),
        "interior",
    );
    let root = world.size() - 1;
    let mut grid = [-1i32; 16];
    if rank == root {
        grid = std::array::from_fn(|i| i as i32);
    }
    let view = t.okay(interior.view_mut(&mut grid, 1), "view of the interior");
    t.okay(world.bcast_view(view, root), "bcast_view");
    let inside = |i: usize| (1..3).contains(&(i / 4)) && (1..3).contains(&(i % 4));
    t.ok(
        grid.iter().enumerate().all(|(i, &v)| {
            v == if inside(i) || rank == root {
                i as i32
            } else {
                -1
            }
        }),
        "bcast_view wrote the interior only",
    );
    let mut again = [-1i32; 16];
    if rank == root {
        again = std::array::from_fn(|i| i as i32 * 2);
    }
    let started = ferrompi::scope(|s| {
        world
            .ibcast_view(s, interior.view_mut(&mut again, 1)?, root)?
            .wait()
            .map(drop)
    });
    t.okay(started, "ibcast_view");
    t.ok(
        again.iter().enumerate().all(|(i, &v)| {
            v == if inside(i) || rank == root {
                i as i32 * 2
            } else {
                -1
            }
        }),
        "ibcast_view wrote the interior only",
    );
    let mut persistent = t.okay(
        interior
            .owned_view(vec![-1i32; 16], 1)
            .and_then(|view| world.bcast_init_view(view, root)),
        "bcast_init_view",
    );
    for round in 0..2 {
        if rank == root {
            for (i, v) in persistent.buffer_mut().iter_mut().enumerate() {
                *v = i as i32 + round * 100;
            }
        }
        t.okay(
            persistent.start().and_then(|a| a.wait()),
            "bcast_init_view start + wait",
        );
        let got = persistent.buffer().to_vec();
        t.ok(
            got.iter().enumerate().all(|(i, &v)| {
                v == if inside(i) || rank == root {
                    i as i32 + round * 100
                } else {
                    -1
                }
            }),
            format!("bcast_init_view round {round} wrote the interior only"),
        );
    }
}

/// One-sided calls on layouts: a column put into the next rank's matrix and read back by
/// `get_view`, the same complete on return in a passive epoch, and layouts reaching outside
/// the target's window refused before MPI runs.
pub(super) fn one_sided(
    mpi: &Mpi,
    world: &ferrompi::Communicator<'_>,
    t: &mut Checks,
    next: i32,
    prev: i32,
) {
    let rank = world.rank();
    // A 4 x 3 row-major matrix per rank; column 1 of the next rank's gets my four values.
    let win = t.okay(
        Window::<f64>::allocate(world, 12),
        "window of a 4 x 3 matrix",
    );
    let column = t.okay(DerivedType::vector(mpi, 4, 1, 3, f64::datatype()), "column");
    let four = t.okay(
        DerivedType::contiguous(mpi, 4, f64::datatype()),
        "four in a row",
    );
    let mine: Vec<f64> = (0..4).map(|i| f64::from(rank * 10 + i)).collect();
    let put = win.fence(Assert::empty(), |epoch| {
        epoch.put_view(four.view(&mine, 1)?, next, 1, &column, 1)
    });
    t.okay(put.and_then(|r| r), "put_view of a column");
    let mut matrix = [-1.0f64; 12];
    let read = win.fence(Assert::empty(), |epoch| epoch.get(&mut matrix, rank, 0));
    t.okay(read.and_then(|r| r), "get of the matrix");
    let want: Vec<f64> = (0..12)
        .map(|k| {
            if k % 3 == 1 {
                f64::from(prev * 10 + k / 3)
            } else {
                0.0
            }
        })
        .collect();
    t.eq(matrix.to_vec(), want, "put_view wrote column 1 only");
    // Read the next rank's column 1 (my own values) into every other slot of eight.
    let every_other = t.okay(
        DerivedType::vector(mpi, 4, 1, 2, f64::datatype()),
        "every other",
    );
    let mut back = [-1.0f64; 8];
    let got = win.fence(Assert::empty(), |epoch| {
        epoch.get_view(every_other.view_mut(&mut back, 1)?, next, 1, &column, 1)
    });
    t.okay(got.and_then(|r| r), "get_view of a column");
    t.eq(
        back,
        [mine[0], -1.0, mine[1], -1.0, mine[2], -1.0, mine[3], -1.0],
        "get_view: my column back from the next rank, into every other slot",
    );
    t.okay(
        win.fence(Assert::NOSUCCEED, |_| ()),
        "fence before the passive epoch",
    );

    // Complete on return: column 2 of my own matrix, in a passive epoch.
    let twice: Vec<f64> = mine.iter().map(|x| x * 2.0).collect();
    let mut again = [0.0f64; 4];
    let passive = win.lock_all(Assert::empty(), |epoch| {
        epoch.put_view_now(four.view(&twice, 1)?, rank, 2, &column, 1)?;
        epoch.get_view_now(four.view_mut(&mut again, 1)?, rank, 2, &column, 1)
    });
    t.okay(passive.and_then(|r| r), "put_view_now + get_view_now");
    t.eq(
        again.to_vec(),
        twice.clone(),
        "the column written and read back on return",
    );

    // The same through one target of the epoch: column 0 of my own matrix, written and read
    // back on return, then a column written at the epoch's end and read after it.
    let thrice: Vec<f64> = mine.iter().map(|x| x * 3.0).collect();
    let mut through = [0.0f64; 4];
    let passive = win.lock_all(Assert::empty(), |epoch| {
        let me = epoch.target(rank)?;
        me.put_view_now(four.view(&thrice, 1)?, 0, &column, 1)?;
        me.get_view_now(four.view_mut(&mut through, 1)?, 0, &column, 1)
    });
    t.okay(
        passive.and_then(|r| r),
        "put_view_now + get_view_now through epoch.target",
    );
    t.eq(
        through.to_vec(),
        thrice.clone(),
        "through epoch.target: the column written and read back on return",
    );
    let mut whole = [-1.0f64; 8];
    let fenced = win.fence(Assert::empty(), |epoch| {
        let me = epoch.target(rank)?;
        me.put_view(four.view(&mine, 1)?, 0, &column, 1)?;
        me.get_view(every_other.view_mut(&mut whole, 1)?, 2, &column, 1)
    });
    t.okay(
        fenced.and_then(|r| r),
        "put_view + get_view through epoch.target",
    );
    t.okay(win.fence(Assert::empty(), |_| ()), "fence after them");
    let mut matrix = [-1.0f64; 12];
    let read = win.fence(Assert::empty(), |epoch| epoch.get(&mut matrix, rank, 0));
    t.okay(
        read.and_then(|r| r),
        "get of the matrix after epoch.target's puts",
    );
    t.eq(
        (0..4).map(|i| matrix[3 * i]).collect::<Vec<_>>(),
        mine.clone(),
        "put_view through epoch.target wrote column 0",
    );
    t.eq(
        [whole[0], whole[1], whole[2], whole[4], whole[6], whole[7]],
        [twice[0], -1.0, twice[1], twice[2], twice[3], -1.0],
        "get_view through epoch.target read column 2 into every other slot",
    );

    // Refused before MPI: past the window's end (a column from element 3 reaches element 12),
    // before its start (a lower bound of -8 at element 0), a count too many, and the
    // complete-on-return form in an active epoch.
    let before = t.okay(
        DerivedType::create_struct(mpi, &[1], &[-8], &[f64::datatype().into()]),
        "a type reaching 8 bytes before its origin",
    );
    let refusals = win.fence(Assert::empty(), |epoch| {
        [
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 3, &column, 1),
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 0, &before, 1),
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 0, &column, 2),
            epoch.put_view(four.view(&mine, 1).unwrap(), world.size(), 0, &column, 1),
        ]
        .map(|r| r.err())
    });
    let refusals = t.okay(refusals, "fence of refusals");
    t.ok(
        matches!(
            refusals[0].as_ref().map(ferrompi::Error::kind),
            Some(ErrorKind::OutOfBounds { .. })
        ) && matches!(
            refusals[1].as_ref().map(ferrompi::Error::kind),
            Some(ErrorKind::OutOfBounds { .. })
        ) && matches!(
            refusals[2].as_ref().map(ferrompi::Error::kind),
            Some(ErrorKind::OutOfBounds { .. })
        ) && matches!(
            refusals[3].as_ref().map(ferrompi::Error::kind),
            Some(ErrorKind::InvalidRank { .. })
        ),
        format!("layouts outside the target's window refused: {refusals:?}"),
    );
    let active = win.fence(Assert::empty(), |epoch| {
        epoch.put_view_now(four.view(&mine, 1)?, next, 1, &column, 1)
    });
    t.ok(
        matches!(
            active
                .as_ref()
                .map(|r| r.as_ref().map_err(ferrompi::Error::kind)),
            Ok(Err(ErrorKind::EpochMisuse { .. }))
        ),
        "put_view_now in a fence epoch refused",
    );
    let through = win.fence(Assert::empty(), |epoch| {
        let to = epoch.target(next)?;
        Ok::<_, Error>([
            to.put_view(four.view(&mine, 1)?, 3, &column, 1).err(),
            to.put_view(four.view(&mine, 1)?, 0, &before, 1).err(),
            to.get_view(four.view_mut(&mut again, 1)?, 0, &column, 2)
                .err(),
            to.put_view_now(four.view(&mine, 1)?, 1, &column, 1).err(),
        ])
    });
    let through = t.okay(
        through.and_then(|r| r),
        "fence of refusals through epoch.target",
    );
    t.ok(
        matches!(through[0].as_ref().map(ferrompi::Error::kind), Some(ErrorKind::OutOfBounds { .. }))
            && matches!(through[1].as_ref().map(ferrompi::Error::kind), Some(ErrorKind::OutOfBounds { .. }))
            && matches!(through[2].as_ref().map(ferrompi::Error::kind), Some(ErrorKind::OutOfBounds { .. }))
            && matches!(through[3].as_ref().map(ferrompi::Error::kind), Some(ErrorKind::EpochMisuse { .. })),
        format!("layouts outside the window, and put_view_now in a fence, refused through epoch.target: {through:?}"),
    );
    t.okay(win.fence(Assert::NOSUCCEED, |_| ()), "closing fence");
}

/// Halo faces of a 3-D block at odd sizes: each of the six faces, packed by a subarray type,
/// holds the elements a triple loop over the face selects.
pub(super) fn halos(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let dims = [5usize, 3, 7];
    let n: usize = dims.iter().product();
    for axis in 0..3 {
        for side in [0, dims[axis] - 1] {
            let mut sub = dims;
            sub[axis] = 1;
            let mut start = [0usize; 3];
            start[axis] = side;
            let face = t.okay(
                DerivedType::subarray(mpi, &dims, &sub, &start, Order::C, f64::datatype()),
                format!("face {axis}/{side}"),
            );
            let mut want = Vec::new();
            for i in start[0]..start[0] + sub[0] {
                for j in start[1]..start[1] + sub[1] {
                    for k in start[2]..start[2] + sub[2] {
                        want.push(((i * dims[1] + j) * dims[2] + k) as f64);
                    }
                }
            }
            t.eq_ok(
                selected(world, &face, n, 1),
                want,
                format!("face {axis}/{side}: elements"),
            );
        }
    }
    // The whole exchange: send the high x-face, receive into the low ghost face of a copy.
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let high = t.okay(
        DerivedType::subarray(
            mpi,
            &dims,
            &[1, 3, 7],
            &[3, 0, 0],
            Order::C,
            f64::datatype(),
        ),
        "interior high face",
    );
    let ghost = t.okay(
        DerivedType::subarray(
            mpi,
            &dims,
            &[1, 3, 7],
            &[0, 0, 0],
            Order::C,
            f64::datatype(),
        ),
        "low ghost face",
    );
    let block: Vec<f64> = (0..n)
        .map(|i| f64::from(rank) * 1000.0 + i as f64)
        .collect();
    let mut ghosts = vec![-1.0f64; n];
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv_view(s, ghost.view_mut(&mut ghosts, 1)?, prev, 20)?;
        world.send_view(high.view(&block, 1)?, next, 20)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "halo exchange");
    let ok = (0..n).all(|i| {
        if i < 21 {
            ghosts[i] == f64::from(prev) * 1000.0 + (i + 3 * 21) as f64
        } else {
            ghosts[i] == -1.0
        }
    });
    t.ok(
        ok,
        "the ghost face holds the neighbour's high face, nothing else written",
    );
}
