//! Graph and distributed-graph topologies and the neighbourhood collectives: every neighbour
//! list against what the same MPI gives C (`ffi`) for the same communicator (self-loops,
//! repeated edges, weights); every neighbourhood collective (allgather, alltoall, their `v`
//! and `w` forms, blocking, nonblocking, persistent on the MPI's path and emulated) against
//! the values its neighbours sent, on Cartesian grids (periodic and not, edges included) and
//! on distributed graphs; a 2-D halo exchange of subarrays; bad input refused on every rank.

use crate::checks::Checks;
use ferrompi::{
    DerivedType, Destination, DistGraphCommunicator, Equivalence, ErrorKind, LayoutBlocks,
    LayoutBlocksMut, Mpi, Order, OwnedLayoutBlocks, Partition, Source, TopologyCommunicator,
    VirtualTopology, ffi,
};
use std::ffi::c_int;

/// What a receive block holds until a neighbour writes it (a `PROC_NULL` neighbour never does).
const UNTOUCHED: i32 = -7;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    graphs(mpi, t);
    dist_graphs(mpi, t);
    let dims = t.okay(mpi.dims_create(world.size(), &[0, 0]), "dims_create");
    for periods in [[true, true], [false, true], [false, false]] {
        let grid = t.okay(world.cart_create(&dims, &periods, false), "cart_create");
        let grid = grid.expect("every process");
        let neighbors: Vec<Option<i32>> = (0..2)
            .flat_map(|d| {
                let shift = grid.shift(d, 1).expect("shift");
                [neighbor_of(shift, false), neighbor_of(shift, true)]
            })
            .collect();
        collectives(
            &grid,
            &neighbors,
            &neighbors,
            Pairing::Cartesian,
            &format!("grid {periods:?}"),
            t,
        );
        halo(mpi, &grid, t);
    }
    bad_input(mpi, t);
    t.okay(world.barrier(), "the world works after the refusals");
}

/// A shift's neighbour behind (`ahead: false`) or ahead, `None` past a wall.
fn neighbor_of(shift: ferrompi::Shift, ahead: bool) -> Option<i32> {
    match (ahead, shift.source, shift.destination) {
        (false, Source::Rank(r), _) | (true, _, Destination::Rank(r)) => Some(r),
        _ => None,
    }
}

/// `MPI_Topo_test` in C.
fn topo_of(comm: ffi::MPI_Comm) -> c_int {
    let mut kind: c_int = -1;
    // SAFETY: a valid communicator; MPI writes one int.
    let rc = unsafe { ffi::MPI_Topo_test(comm, &mut kind) };
    assert_eq!(rc, 0, "MPI_Topo_test");
    kind
}

/// A ring in which node 0 also has a self-loop and its edge to node 1 twice.
fn ring_graph(n: i32) -> (Vec<i32>, Vec<i32>) {
    let mut index = Vec::new();
    let mut edges = Vec::new();
    for k in 0..n {
        edges.push((k + 1) % n);
        edges.push((k + n - 1) % n);
        if k == 0 {
            edges.push(0);
            edges.push((k + 1) % n);
        }
        index.push(edges.len() as i32);
    }
    (index, edges)
}

fn graphs(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let n = world.size();
    let (index, edges) = ring_graph(n);
    let graph = t.okay(world.graph_create(&index, &edges, false), "graph_create");
    let graph = graph.expect("every process is a node");
    t.eq(graph.index(), &index[..], "the index as given");
    t.eq(graph.edges(), &edges[..], "the edges as given");
    t.eq(graph.nnodes(), n as usize, "nnodes");
    t.eq_ok(graph.topo_test(), Some(VirtualTopology::Graph), "topo_test");
    t.eq(
        topo_of(graph.as_raw()),
        topo_kind(VirtualTopology::Graph),
        "C agrees: a graph",
    );
    let raw = graph.as_raw();
    for rank in 0..n {
        let mut count: c_int = -1;
        // SAFETY: a graph communicator and one of its ranks; MPI writes one int, then `count`.
        let c = unsafe {
            assert_eq!(ffi::MPI_Graph_neighbors_count(raw, rank, &mut count), 0);
            let mut c = vec![0; count as usize];
            assert_eq!(
                ffi::MPI_Graph_neighbors(raw, rank, count, c.as_mut_ptr()),
                0
            );
            c
        };
        t.eq_ok(
            graph.neighbors_of(rank),
            c.clone(),
            format!("neighbours of {rank} as C"),
        );
        if rank == graph.rank() {
            t.eq(graph.neighbors(), &c[..], "own neighbours as C");
            t.eq(graph.in_degree(), c.len(), "in-degree: the neighbours");
            t.eq(graph.out_degree(), c.len(), "out-degree: the neighbours");
        }
    }
    let mut c_rank: c_int = -1;
    // SAFETY: a valid communicator and the graph's arrays; MPI writes one int.
    let rc = unsafe {
        ffi::MPI_Graph_map(
            world.as_raw(),
            n,
            index.as_ptr(),
            edges.as_ptr(),
            &mut c_rank,
        )
    };
    t.eq(rc, 0, "MPI_Graph_map");
    t.eq_ok(
        world.graph_map(&index, &edges),
        (c_rank >= 0).then_some(c_rank),
        "graph_map as C",
    );
    // A graph of one node with only a self-loop: the others left out.
    let one = t.okay(world.graph_create(&[1], &[0], false), "a graph of one node");
    t.eq(one.is_some(), world.rank() == 0, "only rank 0 is its node");
    // Neighbourhood collectives on a graph whose every edge is listed at both its ends (a
    // ring: each node joined to the next and the one before).
    let index: Vec<i32> = (1..=n).map(|k| 2 * k).collect();
    let edges: Vec<i32> = (0..n)
        .flat_map(|k| [(k + 1) % n, (k + n - 1) % n])
        .collect();
    let ring = t.okay(world.graph_create(&index, &edges, false), "a ring graph");
    let ring = ring.expect("every process is a node");
    let neighbors: Vec<Option<i32>> = ring.neighbors().iter().map(|&r| Some(r)).collect();
    collectives(&ring, &neighbors, &neighbors, Pairing::InOrder, "graph", t);
    let reordered = t.okay(world.graph_create(&index, &edges, true), "reordered graph");
    t.eq(
        reordered.map(|g| g.size()),
        Some(n),
        "a reordered graph holds everyone",
    );
}

/// The C constant of a topology kind, as the world's neighbours test compares it.
fn topo_kind(kind: VirtualTopology) -> c_int {
    // The kinds are small integers every MPI defines; compare through a communicator that has
    // each, made in C.
    let world = ffi::MPI_COMM_WORLD;
    let mut made = ffi::MPI_COMM_NULL;
    let one: c_int = 1;
    let zero: c_int = 0;
    let edge: c_int = 0;
    // SAFETY: a valid communicator, one node or dimension; MPI writes the handle.
    let rc = unsafe {
        match kind {
            VirtualTopology::Graph => ffi::MPI_Graph_create(world, 1, &one, &edge, 0, &mut made),
            VirtualTopology::Cartesian => ffi::MPI_Cart_create(world, 1, &one, &zero, 0, &mut made),
            VirtualTopology::DistGraph => ffi::MPI_Dist_graph_create_adjacent(
                world,
                0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null(),
                ffi::MPI_INFO_NULL,
                0,
                &mut made,
            ),
        }
    };
    assert_eq!(rc, 0, "a topology made in C");
    let mut kind_of: c_int = -1;
    // SAFETY: rank 0 got a communicator (the others `MPI_COMM_NULL` for one node).
    unsafe {
        if made != ffi::MPI_COMM_NULL {
            assert_eq!(ffi::MPI_Topo_test(made, &mut kind_of), 0);
            assert_eq!(ffi::MPI_Comm_free(&mut made), 0);
        }
        let mut all: c_int = -1;
        assert_eq!(
            ffi::MPI_Allreduce(
                (&raw const kind_of).cast(),
                (&raw mut all).cast(),
                1,
                ffi::MPI_INT32_T,
                ffi::MPI_MAX,
                world,
            ),
            0
        );
        all
    }
}

/// This process's neighbour lists and weights in C.
fn c_dist_neighbors(
    comm: &DistGraphCommunicator<'_>,
) -> (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>, bool) {
    let raw = comm.as_raw();
    let (mut i, mut o, mut w): (c_int, c_int, c_int) = (-1, -1, -1);
    // SAFETY: a distributed-graph communicator; MPI writes three ints, then four arrays of the
    // degrees it gave.
    unsafe {
        assert_eq!(
            ffi::MPI_Dist_graph_neighbors_count(raw, &mut i, &mut o, &mut w),
            0
        );
        let (mut s, mut sw, mut d, mut dw) = (
            vec![0; i as usize],
            vec![0; i as usize],
            vec![0; o as usize],
            vec![0; o as usize],
        );
        let rc = ffi::MPI_Dist_graph_neighbors(
            raw,
            i,
            s.as_mut_ptr(),
            sw.as_mut_ptr(),
            o,
            d.as_mut_ptr(),
            dw.as_mut_ptr(),
        );
        assert_eq!(rc, 0, "MPI_Dist_graph_neighbors");
        (s, sw, d, dw, w != 0)
    }
}

fn as_c(comm: &DistGraphCommunicator<'_>, what: &str, t: &mut Checks) {
    let (s, sw, d, dw, weighted) = c_dist_neighbors(comm);
    t.eq(comm.sources(), &s[..], format!("{what}: sources as C"));
    t.eq(
        comm.destinations(),
        &d[..],
        format!("{what}: destinations as C"),
    );
    t.eq(
        comm.is_weighted(),
        weighted,
        format!("{what}: weighted as C"),
    );
    if weighted {
        t.eq(
            comm.source_weights(),
            Some(&sw[..]),
            format!("{what}: source weights as C"),
        );
        t.eq(
            comm.destination_weights(),
            Some(&dw[..]),
            format!("{what}: destination weights as C"),
        );
    } else {
        t.eq(
            comm.source_weights(),
            None,
            format!("{what}: no source weights"),
        );
    }
    t.eq(
        (comm.in_degree(), comm.out_degree()),
        (s.len(), d.len()),
        format!("{what}: degrees"),
    );
    t.eq_ok(
        comm.topo_test(),
        Some(VirtualTopology::DistGraph),
        format!("{what}: topo_test"),
    );
    t.eq(
        topo_of(comm.as_raw()),
        topo_kind(VirtualTopology::DistGraph),
        format!("{what}: C agrees"),
    );
}

fn dist_graphs(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (me, n) = (world.rank(), world.size());
    let (back, ahead) = ((me + n - 1) % n, (me + 1) % n);
    // From the one before, twice, and from itself; to the one after, twice, and to itself.
    let sources = [back, back, me];
    let destinations = [ahead, ahead, me];
    let weighted = t.okay(
        world.dist_graph_create_adjacent(
            &sources,
            &destinations,
            Some((&[1, 2, 3], &[4, 5, 6])),
            false,
        ),
        "dist_graph_create_adjacent, weighted",
    );
    as_c(&weighted, "adjacent, weighted", t);
    t.eq(
        weighted.sources(),
        &sources[..],
        "adjacent: the sources in the order given",
    );
    t.eq(
        weighted.source_weights(),
        Some(&[1, 2, 3][..]),
        "adjacent: the weights as given",
    );
    let plain = t.okay(
        world.dist_graph_create_adjacent(&sources, &destinations, None, false),
        "dist_graph_create_adjacent, unweighted",
    );
    as_c(&plain, "adjacent, unweighted", t);
    t.ok(!plain.is_weighted(), "unweighted");
    // The j-th edge from a process to another meets the j-th edge of the other from it.
    let into: Vec<Option<i32>> = sources.iter().map(|&r| Some(r)).collect();
    let out: Vec<Option<i32>> = destinations.iter().map(|&r| Some(r)).collect();
    collectives(&plain, &into, &out, Pairing::InOrder, "adjacent graph", t);

    // An edgeless process, weighted (MPI_WEIGHTS_EMPTY): rank 0 sends to everyone else.
    let (s, d): (Vec<i32>, Vec<i32>) = if me == 0 {
        (vec![], (1..n).collect())
    } else {
        (vec![0], vec![])
    };
    let (sw, dw) = (vec![9; s.len()], vec![9; d.len()]);
    let star = t.okay(
        world.dist_graph_create_adjacent(&s, &d, Some((&sw, &dw)), false),
        "a star, weighted, with edgeless sides",
    );
    as_c(&star, "star", t);
    let into: Vec<Option<i32>> = s.iter().map(|&r| Some(r)).collect();
    let out: Vec<Option<i32>> = d.iter().map(|&r| Some(r)).collect();
    collectives(&star, &into, &out, Pairing::InOrder, "star", t);

    // Rank 0 gives every edge: k -> k+1 (weight k) and k -> k (weight 100).
    let (src, deg, dst, w): (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>) = if me == 0 {
        (
            (0..n).collect(),
            vec![2; n as usize],
            (0..n).flat_map(|k| [(k + 1) % n, k]).collect(),
            (0..n).flat_map(|k| [k, 100]).collect(),
        )
    } else {
        (vec![], vec![], vec![], vec![])
    };
    let general = t.okay(
        world.dist_graph_create(&src, &deg, &dst, Some(&w), false),
        "dist_graph_create",
    );
    as_c(&general, "general", t);
    let mut sorted = general.destinations().to_vec();
    sorted.sort_unstable();
    let mut want = vec![ahead, me];
    want.sort_unstable();
    t.eq(sorted, want, "general: the destinations given");
    let into: Vec<Option<i32>> = general.sources().iter().map(|&r| Some(r)).collect();
    let out: Vec<Option<i32>> = general.destinations().iter().map(|&r| Some(r)).collect();
    if general.sources().iter().filter(|&&r| r == me).count() <= 1 {
        collectives(&general, &into, &out, Pairing::InOrder, "general graph", t);
    }
    let reordered = t.okay(
        world.dist_graph_create_adjacent(&sources, &destinations, None, true),
        "reordered distributed graph",
    );
    t.eq(reordered.size(), n, "a reordered graph holds everyone");
}

/// The block `from` sends to its `k`-th destination: unique per sender and edge.
fn block(from: i32, k: usize) -> i32 {
    1000 * from + k as i32
}

/// How a process's sources meet their senders' destinations.
#[derive(Clone, Copy)]
enum Pairing {
    /// A Cartesian grid: the block a process receives from the neighbour one step back is the
    /// one that neighbour sent a step ahead, whoever the neighbours are (MPI-4.0 §8.6).
    Cartesian,
    /// A graph: the one edge from a process to another meets the one edge of the other from
    /// it (where there are more, any may meet any).
    InOrder,
}

/// Which block of `from`'s destinations reaches this process as its `i`-th source, `from`
/// having `theirs` as its destinations and joined to this process by that edge only.
fn matching(pairing: Pairing, i: usize, theirs: &[Option<i32>], me: i32) -> usize {
    match pairing {
        Pairing::Cartesian => i ^ 1,
        Pairing::InOrder => theirs
            .iter()
            .position(|&d| d == Some(me))
            .expect("a matching edge"),
    }
}

/// Every neighbourhood collective on `comm`, whose sources are `into` and destinations `out`
/// (`None`: `PROC_NULL`), checked against what the neighbours sent.
fn collectives<'e>(
    comm: &TopologyCommunicator<'e>,
    into: &[Option<i32>],
    out: &[Option<i32>],
    pairing: Pairing,
    what: &str,
    t: &mut Checks,
) {
    let me = comm.rank();
    // Everyone's destinations, to know which of its blocks reaches whom.
    let out_lists = all_destinations(comm, out);

    // allgather: each source's rank.
    let mut got = vec![UNTOUCHED; into.len()];
    t.okay(
        comm.neighbor_allgather(&[me], &mut got),
        format!("{what}: neighbor_allgather"),
    );
    let want: Vec<i32> = into.iter().map(|s| s.unwrap_or(UNTOUCHED)).collect();
    t.eq(&got, &want, format!("{what}: allgather from the sources"));
    let mut again = vec![UNTOUCHED; into.len()];
    let mine = [me];
    t.okay(
        ferrompi::scope(|s| {
            comm.ineighbor_allgather(s, &mine, &mut again)?
                .wait()
                .map(drop)
        }),
        format!("{what}: ineighbor_allgather"),
    );
    t.eq(
        &again,
        &want,
        format!("{what}: ineighbor_allgather as blocking"),
    );

    // alltoall: block k goes to destination k. Where two edges join the same two processes
    // (a Cartesian dimension of 1 or 2 periodic processes, a repeated edge), MPIs differ in
    // which of the blocks lands where (Open MPI 4.1's nonblocking form and MPICH's graphs pair
    // them in order, the others as MPI-4.0 §8.6 orders a grid): any of them is taken there,
    // and every form must give exactly what C gets from the same MPI.
    let send: Vec<i32> = (0..out.len()).map(|k| block(me, k)).collect();
    let wants: Vec<Vec<i32>> = (0..into.len())
        .map(|i| match into[i] {
            Some(from) if into.iter().filter(|&&s| s == into[i]).count() > 1 => out_lists
                [from as usize]
                .iter()
                .enumerate()
                .filter(|&(_, &d)| d == Some(me))
                .map(|(k, _)| block(from, k))
                .collect(),
            Some(from) => vec![block(
                from,
                matching(pairing, i, &out_lists[from as usize], me),
            )],
            None => vec![UNTOUCHED],
        })
        .collect();
    let mut got = vec![UNTOUCHED; into.len()];
    t.okay(
        comm.neighbor_alltoall(&send, &mut got),
        format!("{what}: neighbor_alltoall"),
    );
    t.ok(
        within(&got, &wants),
        format!("{what}: alltoall, each block from its edge: {got:?} of {wants:?}"),
    );
    t.eq(
        &got,
        &c_alltoall(comm, &send, into.len(), false),
        format!("{what}: alltoall as C"),
    );
    let mut again = vec![UNTOUCHED; into.len()];
    t.okay(
        ferrompi::scope(|s| {
            comm.ineighbor_alltoall(s, &send, &mut again)?
                .wait()
                .map(drop)
        }),
        format!("{what}: ineighbor_alltoall"),
    );
    t.ok(
        within(&again, &wants),
        format!("{what}: ineighbor_alltoall: {again:?} of {wants:?}"),
    );
    t.eq(
        &again,
        &c_alltoall(comm, &send, into.len(), true),
        format!("{what}: ineighbor_alltoall as C"),
    );

    // alltoallv: blocks of lengths that do not depend on how repeated edges pair: on a grid,
    // 1 + the dimension; on a graph, 1 + the sender's rank modulo 3. Received with a gap
    // before each block.
    let length = |k: usize, from: i32| match pairing {
        Pairing::Cartesian => k / 2 + 1,
        Pairing::InOrder => from as usize % 3 + 1,
    };
    let counts_out: Vec<usize> = (0..out.len()).map(|k| length(k, me)).collect();
    let send_blocks = Partition::<i32>::from_counts(&counts_out).expect("send blocks");
    let sendv: Vec<i32> = (0..out.len())
        .flat_map(|k| vec![block(me, k); length(k, me)])
        .collect();
    let lens: Vec<usize> = (0..into.len())
        .map(|i| into[i].map_or(1, |from| length(i, from)))
        .collect();
    let mut offsets = Vec::new();
    let mut at = 1;
    for &len in &lens {
        offsets.push(at);
        at += len + 1;
    }
    let recv_blocks =
        Partition::<i32>::from_counts_and_displacements(&lens, &offsets).expect("receive blocks");
    let mut gotv = vec![UNTOUCHED; at];
    t.okay(
        comm.neighbor_alltoallv(&sendv, &send_blocks, &mut gotv, &recv_blocks),
        format!("{what}: neighbor_alltoallv"),
    );
    let blocks_of = |v: &[i32]| -> bool {
        let inside = (0..lens.len()).all(|i| {
            let b = &v[offsets[i]..offsets[i] + lens[i]];
            b.iter().all(|&x| x == b[0]) && wants[i].contains(&b[0])
        });
        let gaps = v[0] == UNTOUCHED
            && offsets
                .iter()
                .zip(&lens)
                .all(|(&o, &l)| v[o + l] == UNTOUCHED);
        inside && gaps
    };
    t.ok(
        blocks_of(&gotv),
        format!("{what}: alltoallv, each block in its place: {gotv:?}"),
    );
    let mut againv = vec![UNTOUCHED; at];
    t.okay(
        ferrompi::scope(|s| {
            comm.ineighbor_alltoallv(s, &sendv, &send_blocks, &mut againv, &recv_blocks)?
                .wait()
                .map(drop)
        }),
        format!("{what}: ineighbor_alltoallv"),
    );
    t.ok(
        blocks_of(&againv),
        format!("{what}: ineighbor_alltoallv: {againv:?}"),
    );

    // allgatherv: one value from each source, spaced out.
    let spaced = Partition::<i32>::from_counts_and_displacements(
        &vec![1; into.len()],
        &(0..into.len()).map(|i| 2 * i).collect::<Vec<_>>(),
    )
    .expect("spaced blocks");
    let mut gotg = vec![UNTOUCHED; 2 * into.len()];
    t.okay(
        comm.neighbor_allgatherv(&[me], &mut gotg, &spaced),
        format!("{what}: neighbor_allgatherv"),
    );
    let wantg: Vec<i32> = into
        .iter()
        .flat_map(|s| [s.unwrap_or(UNTOUCHED), UNTOUCHED])
        .collect();
    t.eq(&gotg, &wantg, format!("{what}: allgatherv"));

    // Persistent, on the MPI's path and emulated, three starts each with new data.
    for emulate in [false, true] {
        ferrompi::set_persistent_emulation(emulate);
        let mut gather = t.okay(
            comm.neighbor_allgather_init(vec![0i32], vec![UNTOUCHED; into.len()]),
            format!("{what}: neighbor_allgather_init"),
        );
        let mut swap = t.okay(
            comm.neighbor_alltoall_init(vec![0i32; out.len()], vec![UNTOUCHED; into.len()]),
            format!("{what}: neighbor_alltoall_init"),
        );
        let mut swapv = t.okay(
            comm.neighbor_alltoallv_init(
                sendv.clone(),
                &send_blocks,
                vec![UNTOUCHED; at],
                &recv_blocks,
            ),
            format!("{what}: neighbor_alltoallv_init"),
        );
        let mut gatherv = t.okay(
            comm.neighbor_allgatherv_init(vec![me], vec![UNTOUCHED; 2 * into.len()], &spaced),
            format!("{what}: neighbor_allgatherv_init"),
        );
        t.eq(
            gather.is_emulated(),
            emulate
                || ferrompi::persistent_collectives() == ferrompi::PersistentCollectives::Emulated,
            format!("{what}: the path asked for"),
        );
        for round in 0..3 {
            gather.send_mut()[0] = me + 10_000 * round;
            for (k, v) in swap.send_mut().iter_mut().enumerate() {
                *v = block(me, k) + 10_000 * round;
            }
            t.okay(
                gather.start().and_then(|a| a.wait()),
                format!("{what}: allgather start"),
            );
            t.okay(
                swap.start().and_then(|a| a.wait()),
                format!("{what}: alltoall start"),
            );
            t.okay(
                swapv.start().and_then(|a| a.wait()),
                format!("{what}: alltoallv start"),
            );
            t.okay(
                gatherv.start().and_then(|a| a.wait()),
                format!("{what}: allgatherv start"),
            );
            let shifted = |v: i32| {
                if v == UNTOUCHED {
                    v
                } else {
                    v + 10_000 * round
                }
            };
            let wanted: Vec<i32> = into
                .iter()
                .map(|s| shifted(s.unwrap_or(UNTOUCHED)))
                .collect();
            t.eq(
                gather.recv(),
                &wanted[..],
                format!("{what}: persistent allgather, round {round}"),
            );
            let wanted: Vec<Vec<i32>> = wants
                .iter()
                .map(|w| w.iter().map(|&v| shifted(v)).collect())
                .collect();
            t.ok(
                within(swap.recv(), &wanted),
                format!("{what}: persistent alltoall, round {round}"),
            );
            t.ok(
                blocks_of(swapv.recv()),
                format!("{what}: persistent alltoallv"),
            );
            t.eq(
                gatherv.recv(),
                &wantg[..],
                format!("{what}: persistent allgatherv"),
            );
        }
        ferrompi::set_persistent_emulation(false);
    }
}

/// Whether each value is one of those its slot allows.
fn within(got: &[i32], wants: &[Vec<i32>]) -> bool {
    got.len() == wants.len() && got.iter().zip(wants).all(|(v, w)| w.contains(v))
}

/// `MPI_Neighbor_alltoall` (or `MPI_Ineighbor_alltoall` and `MPI_Wait`) in C on `comm`.
fn c_alltoall(
    comm: &TopologyCommunicator<'_>,
    send: &[i32],
    recv_len: usize,
    nonblocking: bool,
) -> Vec<i32> {
    let mut recv = vec![UNTOUCHED; recv_len];
    let n = if send.is_empty() {
        (recv_len / comm.in_degree().max(1)) as c_int
    } else {
        (send.len() / comm.out_degree()) as c_int
    };
    let (s, d) = (send.as_ptr().cast(), recv.as_mut_ptr().cast());
    // SAFETY: buffers of `n` ints per neighbour on each side, for the call's duration.
    unsafe {
        let rc = if nonblocking {
            let mut r = ffi::MPI_REQUEST_NULL;
            let rc = ffi::MPI_Ineighbor_alltoall(
                s,
                n,
                ffi::MPI_INT32_T,
                d,
                n,
                ffi::MPI_INT32_T,
                comm.as_raw(),
                &mut r,
            );
            assert_eq!(rc, 0, "MPI_Ineighbor_alltoall");
            ffi::MPI_Wait(&mut r, ffi::MPI_STATUS_IGNORE)
        } else {
            ffi::MPI_Neighbor_alltoall(
                s,
                n,
                ffi::MPI_INT32_T,
                d,
                n,
                ffi::MPI_INT32_T,
                comm.as_raw(),
            )
        };
        assert_eq!(rc, 0, "the C neighbourhood all-to-all");
    }
    recv
}

/// Every process's destinations (`None`: `PROC_NULL`), gathered in C-free Rust: an allgather of
/// the counts, then of the lists.
fn all_destinations(comm: &TopologyCommunicator<'_>, out: &[Option<i32>]) -> Vec<Vec<Option<i32>>> {
    let size = comm.size() as usize;
    let mut counts = vec![0i32; size];
    comm.allgather(&[out.len() as i32], &mut counts)
        .expect("allgather of the degrees");
    let lens: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let blocks = Partition::<i32>::from_counts(&lens).expect("blocks");
    let mine: Vec<i32> = out.iter().map(|d| d.unwrap_or(-1)).collect();
    let mut all = vec![0i32; lens.iter().sum()];
    comm.allgatherv(&mine, &mut all, &blocks)
        .expect("allgatherv of the lists");
    let mut at = 0;
    lens.iter()
        .map(|&len| {
            let list = all[at..at + len]
                .iter()
                .map(|&r| (r >= 0).then_some(r))
                .collect();
            at += len;
            list
        })
        .collect()
}

/// A 2-D halo exchange on `grid` through `neighbor_alltoallw` with subarray types: each
/// process's 3 x 4 interior (its rank everywhere) with a ghost layer; after the exchange each
/// ghost face holds the neighbour's rank across it (or is untouched at a non-periodic edge).
fn halo(mpi: &Mpi, grid: &ferrompi::CartCommunicator<'_>, t: &mut Checks) {
    let (ny, nx) = (3usize, 4usize);
    let sizes = [ny + 2, nx + 2];
    let sub = |subsizes: [usize; 2], starts: [usize; 2]| {
        DerivedType::subarray(mpi, &sizes, &subsizes, &starts, Order::C, f64::datatype())
            .expect("subarray")
    };
    // Dimension 0 is y (rows), dimension 1 is x (columns); per dimension: back, then ahead.
    let send_types = [
        sub([1, nx], [1, 1]),
        sub([1, nx], [ny, 1]),
        sub([ny, 1], [1, 1]),
        sub([ny, 1], [1, nx]),
    ];
    let recv_types = [
        sub([1, nx], [0, 1]),
        sub([1, nx], [ny + 1, 1]),
        sub([ny, 1], [1, 0]),
        sub([ny, 1], [1, nx + 1]),
    ];
    let me = f64::from(grid.rank());
    let mut field = vec![f64::from(UNTOUCHED); sizes[0] * sizes[1]];
    for y in 1..=ny {
        for x in 1..=nx {
            field[y * sizes[1] + x] = me;
        }
    }
    let interior = field.clone();
    let mut ghosts = field.clone();
    let send_blocks: Vec<_> = send_types.iter().map(|ty| (ty, 1, 0)).collect();
    let recv_blocks: Vec<_> = recv_types.iter().map(|ty| (ty, 1, 0)).collect();
    {
        let send = LayoutBlocks::new(&interior, &send_blocks).expect("send blocks");
        let mut recv = LayoutBlocksMut::new(&mut ghosts, &recv_blocks).expect("receive blocks");
        t.okay(
            grid.neighbor_alltoallw(&send, &mut recv),
            "neighbor_alltoallw halo",
        );
    }
    let neighbor = |d: usize, ahead: bool| -> f64 {
        let shift = grid.shift(d, 1).expect("shift");
        f64::from(neighbor_of(shift, ahead).unwrap_or(UNTOUCHED))
    };
    let mut want = interior.clone();
    for x in 1..=nx {
        want[x] = neighbor(0, false);
        want[(ny + 1) * sizes[1] + x] = neighbor(0, true);
    }
    for y in 1..=ny {
        want[y * sizes[1]] = neighbor(1, false);
        want[y * sizes[1] + nx + 1] = neighbor(1, true);
    }
    t.eq(
        &ghosts,
        &want,
        "the halo: each face from the neighbour across it",
    );
    let mut again = field.clone();
    {
        let send = LayoutBlocks::new(&interior, &send_blocks).expect("send blocks");
        let mut recv = LayoutBlocksMut::new(&mut again, &recv_blocks).expect("receive blocks");
        t.okay(
            ferrompi::scope(|s| {
                grid.ineighbor_alltoallw(s, &send, &mut recv)?
                    .wait()
                    .map(drop)
            }),
            "ineighbor_alltoallw halo",
        );
    }
    t.eq(&again, &want, "ineighbor_alltoallw as blocking");
    for emulate in [false, true] {
        ferrompi::set_persistent_emulation(emulate);
        let mut persistent = t.okay(
            grid.neighbor_alltoallw_init(
                OwnedLayoutBlocks::new(interior.clone(), &send_blocks).expect("owned send"),
                OwnedLayoutBlocks::new(field.clone(), &recv_blocks).expect("owned receive"),
            ),
            "neighbor_alltoallw_init halo",
        );
        for _ in 0..2 {
            t.okay(persistent.start().and_then(|a| a.wait()), "halo start");
            t.eq(persistent.recv(), &want[..], "persistent halo");
        }
        ferrompi::set_persistent_emulation(false);
    }
}

fn bad_input(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (me, n) = (world.rank(), world.size());
    let invalid = |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    t.err(
        world.graph_create(&[2, 1], &[0, 0], false),
        invalid,
        "a decreasing index",
    );
    t.err(
        world.graph_create(&[1], &[0, 0], false),
        invalid,
        "an index short of the edges",
    );
    t.err(
        world.graph_create(&[1], &[3], false),
        invalid,
        "an edge to no node",
    );
    t.err(world.graph_create(&[], &[], false), invalid, "no node");
    let too_many: Vec<i32> = (1..=n + 1).collect();
    t.err(
        world.graph_create(&too_many, &vec![0; n as usize + 1], false),
        invalid,
        "more nodes than processes",
    );
    // One process's bad part: every process refuses, and none hangs.
    let bad = if me == n - 1 { n } else { me };
    t.err(
        world.dist_graph_create_adjacent(&[bad], &[bad], None, false),
        invalid,
        "a rank outside, on one process",
    );
    // Weights on some processes only.
    let weights: Option<(&[i32], &[i32])> = if me == 0 { Some((&[1], &[1])) } else { None };
    if n > 1 {
        t.err(
            world.dist_graph_create_adjacent(&[me], &[me], weights, false),
            invalid,
            "weights on some processes only",
        );
    }
    t.err(
        world.dist_graph_create_adjacent(&[me], &[me], Some((&[1, 2], &[1])), false),
        invalid,
        "weights of another length",
    );
    t.err(
        world.dist_graph_create_adjacent(&[me], &[me], Some((&[-1], &[1])), false),
        invalid,
        "a negative weight",
    );
    t.err(
        world.dist_graph_create(&[me], &[2], &[me], None, false),
        invalid,
        "degrees that do not add up",
    );
    t.err(
        world.dist_graph_create(&[me], &[], &[], None, false),
        invalid,
        "no degree for a source",
    );
    // Buffers that do not fit the neighbours.
    let ring = world
        .cart_create(&[n], &[true], false)
        .expect("ring")
        .expect("every process");
    let size_error = |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::BufferSize { .. });
    t.err(
        ring.neighbor_allgather(&[1i32], &mut [0i32; 3]),
        size_error,
        "allgather: room for 3 of 2",
    );
    t.err(
        ring.neighbor_alltoall(&[1i32; 3], &mut [0i32; 3]),
        invalid,
        "alltoall: 3 values for 2 neighbours",
    );
    t.err(
        ring.neighbor_alltoall(&[1i32; 2], &mut [0i32; 4]),
        size_error,
        "alltoall: receive of another length",
    );
    let three = Partition::<i32>::from_counts(&[1, 1, 1]).expect("three blocks");
    let two = Partition::<i32>::from_counts(&[1, 1]).expect("two blocks");
    t.err(
        ring.neighbor_alltoallv(&[0; 3], &three, &mut [0; 2], &two),
        invalid,
        "alltoallv: three send blocks",
    );
    t.err(
        ring.neighbor_allgatherv(&[0], &mut [0; 1], &two),
        size_error,
        "allgatherv: a short buffer",
    );
    t.err(
        ring.neighbor_allgather_init(vec![1i32], vec![0i32; 1]),
        size_error,
        "allgather_init: a short buffer",
    );
    let overlapping =
        Partition::<i32>::from_counts_and_displacements(&[2, 2], &[0, 1]).expect("overlap");
    t.err(
        ring.neighbor_alltoallv(&[0; 2], &two, &mut [0; 3], &overlapping),
        invalid,
        "alltoallv: receive blocks that overlap",
    );
}
