//! The comparison's rows for a stencil's halo exchange: the faces of this process's block of a
//! 512 x 512 grid of `f64`, decomposed over a 2-D Cartesian communicator, exchanged by one
//! `neighbor_alltoallw` of subarray types: blocking, nonblocking + wait, and persistent
//! start + wait, each against the same exchange written in C (`ferrompi_c_halo`) on the same
//! communicator. Beside the rows, what the persistent form buys over the other two in C.

use super::*;
use ferrompi::{CartCommunicator, DerivedType, LayoutBlocks, LayoutBlocksMut, Order};
use ferrompi::{Equivalence, OwnedLayoutBlocks};

/// The global grid's side.
pub(super) const GRID: usize = 512;
/// The rows' byte column: the global grid's bytes.
const BYTES: usize = GRID * GRID * 8;

/// The cells `start..start + len` of `n` split into `parts` as evenly as it goes.
fn share(n: usize, parts: usize, part: usize) -> usize {
    n / parts + usize::from(part < n % parts)
}

/// The four faces of an `ly x lx` block with a ghost layer, sent (from the interior's edge
/// rows and columns) or received (into the ghosts), in the neighbourhood order.
fn faces<'m>(mpi: &'m Mpi, ly: usize, lx: usize, ghosts: bool) -> Vec<DerivedType<'m>> {
    let sizes = [ly + 2, lx + 2];
    let at: [[usize; 2]; 4] = if ghosts {
        [[0, 1], [ly + 1, 1], [1, 0], [1, lx + 1]]
    } else {
        [[1, 1], [ly, 1], [1, 1], [1, lx]]
    };
    let sub = [[1, lx], [1, lx], [ly, 1], [ly, 1]];
    (0..4)
        .map(|k| {
            DerivedType::subarray(mpi, &sizes, &sub[k], &at[k], Order::C, f64::datatype())
                .expect("subarray")
        })
        .collect()
}

/// This process's block of the grid and its face types, made before the benchmark and freed
/// after it.
pub(super) struct Faces<'m> {
    ly: usize,
    lx: usize,
    sends: Vec<DerivedType<'m>>,
    ghosts: Vec<DerivedType<'m>>,
}

impl<'m> Faces<'m> {
    pub(super) fn new(mpi: &'m Mpi, grid: &CartCommunicator<'_>) -> Faces<'m> {
        let (dims, coords) = (grid.dims(), grid.coords());
        let ly = share(GRID, dims[0] as usize, coords[0] as usize);
        let lx = share(GRID, dims[1] as usize, coords[1] as usize);
        Faces {
            ly,
            lx,
            sends: faces(mpi, ly, lx, false),
            ghosts: faces(mpi, ly, lx, true),
        }
    }
}

/// A buffer that lives as long as the benchmark (the blocks borrow it from outside the
/// measured closures, so that they are made once, as a C program makes its arrays).
fn forever(cells: usize, value: f64) -> &'static mut [f64] {
    Box::leak(vec![value; cells].into_boxed_slice())
}

/// The halo-exchange rows on `grid` (every process of the world on a 2-D grid).
pub(super) fn halo<'a>(
    bench: &mut MpiBench<'a>,
    rows: &mut Vec<Row>,
    faces: &'a Faces<'a>,
    grid: &'a CartCommunicator<'a>,
) {
    let (ly, lx) = (faces.ly, faces.lx);
    let cells = (ly + 2) * (lx + 2);
    let (sends, ghosts) = (blocks_of(&faces.sends), blocks_of(&faces.ghosts));
    let comm = grid.as_raw();
    let c = move |form: c_int| {
        move |iters: u64| {
            // SAFETY: a 2-D Cartesian communicator and this process's block; the C side makes
            // and frees its own buffers and types.
            let s = unsafe { ferrompi_c_halo(iters as c_long, comm, int(ly), int(lx), form) };
            assert!(
                s >= 0.0,
                "this MPI has no persistent neighbourhood all-to-all for C"
            );
            seconds(s)
        }
    };

    let send = LayoutBlocks::new(forever(cells, 1.0), &sends).expect("send blocks");
    let mut recv = LayoutBlocksMut::new(forever(cells, 0.0), &ghosts).expect("receive blocks");
    bench.add("halo", "ferrompi", BYTES, move |iters| {
        timed(iters, || {
            grid.neighbor_alltoallw(&send, &mut recv)
                .expect("neighbor_alltoallw")
        })
    });
    bench.add("halo", "c", BYTES, c(0));

    let send = LayoutBlocks::new(forever(cells, 1.0), &sends).expect("send blocks");
    let mut recv = LayoutBlocksMut::new(forever(cells, 0.0), &ghosts).expect("receive blocks");
    bench.add("ihalo", "ferrompi", BYTES, move |iters| {
        timed(iters, || {
            ferrompi::scope(|scope| {
                grid.ineighbor_alltoallw(scope, &send, &mut recv)?
                    .wait()
                    .map(drop)
            })
            .expect("ineighbor_alltoallw")
        })
    });
    bench.add("ihalo", "c", BYTES, c(1));

    let persistent = grid
        .neighbor_alltoallw_init(
            OwnedLayoutBlocks::new(vec![1.0f64; cells], &sends).expect("send blocks"),
            OwnedLayoutBlocks::new(vec![0.0f64; cells], &ghosts).expect("receive blocks"),
        )
        .expect("neighbor_alltoallw_init");
    let persistent = RefCell::new(persistent);
    bench.add("halo_init", "ferrompi", BYTES, move |iters| {
        let mut persistent = persistent.borrow_mut();
        timed(iters, || {
            persistent
                .start()
                .and_then(|a| a.wait())
                .expect("start/wait");
        })
    });
    bench.add("halo_init", "c", BYTES, c(2));

    for (group, what) in [
        ("halo", "halo exchange 512² (neighbor_alltoallw)"),
        ("ihalo", "halo exchange 512² (ineighbor_alltoallw + wait)"),
        ("halo_init", "halo exchange 512² (persistent start + wait)"),
    ] {
        rows.push(Row {
            group,
            what,
            bytes: BYTES,
            target: 1.02,
        });
    }
}

/// One block of each face type, at byte 0 (a subarray type places itself).
fn blocks_of<'t, 'm>(types: &'t [DerivedType<'m>]) -> Vec<(&'t DerivedType<'m>, usize, usize)> {
    types.iter().map(|t| (t, 1, 0)).collect()
}

/// What the persistent exchange buys on this MPI, measured in C (the binding plays no part).
pub(super) fn persistent_effect(session: &mut Session<'_>, rounds: usize) -> String {
    if !["halo_init", "halo", "ihalo"]
        .iter()
        .all(|g| session.has(g, "c", BYTES))
    {
        return String::new();
    }
    let p = ("halo_init", "c");
    let blocking = session.ratio(p, ("halo", "c"), BYTES, rounds);
    let nonblocking = session.ratio(p, ("ihalo", "c"), BYTES, rounds);
    format!(
        "\nPersistent halo exchange in C against the other two forms (median of interleaved \
         quartets; below 1 means persistent is faster):\n\n\
         | bytes | persistent / blocking | persistent / ineighbor_alltoallw + wait |\n\
         |---:|---:|---:|\n| {BYTES} | {blocking:.3} | {nonblocking:.3} |\n"
    )
}
