//! The explicit heat equation on a 2-D grid, decomposed over a Cartesian communicator laid out
//! over the nodes (`Hierarchy::cart_create`): each step one persistent neighbourhood exchange
//! of subarray faces (`neighbor_alltoallw_init`), overlapped with the update of the cells that
//! need no neighbour's value. At the end every process checks its block against a serial run
//! of the same stencil (the largest difference must be at most 1e-12) and rank 0 prints the
//! time per step and the share of it spent in MPI.
//!
//! Any process count: the grid is split as evenly as it goes, blocks of unequal sizes where it
//! does not divide. The walls hold 0 (their ghost cells face `PROC_NULL`, which leaves them
//! untouched).
//!
//! ```sh
//! cargo build --release --example halo_exchange
//! mpirun -n 4 target/release/examples/halo_exchange              # 512 x 512, 200 steps
//! mpirun -n 3 target/release/examples/halo_exchange 1000 700 50  # nx ny steps
//! ```

use ferrompi::{DerivedType, Equivalence, Max, Mpi, Order, OwnedLayoutBlocks, Result, Sum};
use std::time::{Duration, Instant};

/// The diffusion number: stable for an explicit 2-D step up to 0.25.
const R: f64 = 0.2;

/// One step of the stencil at a cell, from the cell and its four neighbours: the same
/// expression, in the same order, in the serial and the parallel run.
#[inline(always)]
fn step(c: f64, north: f64, south: f64, west: f64, east: f64) -> f64 {
    c + R * (north + south + west + east - 4.0 * c)
}

/// The initial temperature at global cell `(y, x)` of an `ny x nx` grid.
fn initial(y: usize, x: usize, ny: usize, nx: usize) -> f64 {
    let (fy, fx) = (
        (y + 1) as f64 / (ny + 1) as f64,
        (x + 1) as f64 / (nx + 1) as f64,
    );
    (std::f64::consts::PI * fy).sin() * (std::f64::consts::PI * fx).sin() + fx * fy * (1.0 - fx)
}

/// The whole grid, `steps` steps, on one process: an `(ny + 2) x (nx + 2)` array whose border
/// holds the walls' 0.
fn serial(ny: usize, nx: usize, steps: usize) -> Vec<f64> {
    let w = nx + 2;
    let mut u = vec![0.0; (ny + 2) * w];
    for y in 0..ny {
        for x in 0..nx {
            u[(y + 1) * w + x + 1] = initial(y, x, ny, nx);
        }
    }
    let mut next = u.clone();
    for _ in 0..steps {
        for y in 1..=ny {
            for x in 1..=nx {
                let i = y * w + x;
                next[i] = step(u[i], u[i - w], u[i + w], u[i - 1], u[i + 1]);
            }
        }
        std::mem::swap(&mut u, &mut next);
    }
    u
}

/// The cells `start..start + len` of `n` split into `parts` as evenly as it goes.
fn share(n: usize, parts: usize, part: usize) -> (usize, usize) {
    let (base, extra) = (n / parts, n % parts);
    (
        part * base + part.min(extra),
        base + usize::from(part < extra),
    )
}

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: halo_exchange [nx ny steps]"))
        .collect();
    let (nx, ny, steps) = match args[..] {
        [] => (512, 512, 200),
        [nx, ny, steps] => (nx, ny, steps),
        _ => panic!("usage: halo_exchange [nx ny steps]"),
    };

    // The grid of processes (dimension 0 along y, 1 along x), laid out over the nodes so that
    // each node holds one box of it, and this process's block.
    let grid = world.hierarchy()?.cart_create(&world, 2, &[false, false])?;
    let dims = grid.dims().to_vec();
    let (py, px) = (grid.coords()[0] as usize, grid.coords()[1] as usize);
    let (y0, ly) = share(ny, dims[0] as usize, py);
    let (x0, lx) = share(nx, dims[1] as usize, px);
    assert!(ly > 0 && lx > 0, "more processes than rows or columns");
    let w = lx + 2;
    let sizes = [ly + 2, w];

    // The faces: along y then x, the one towards the neighbour behind, then ahead (the order
    // of a Cartesian neighbourhood, MPI-4.0 §8.6). Sent from the interior's edge rows and
    // columns, received into the ghost layer.
    let face = |sub: [usize; 2], start: [usize; 2]| {
        DerivedType::subarray(&mpi, &sizes, &sub, &start, Order::C, f64::datatype())
    };
    let send_faces = [
        face([1, lx], [1, 1])?,
        face([1, lx], [ly, 1])?,
        face([ly, 1], [1, 1])?,
        face([ly, 1], [1, lx])?,
    ];
    let ghost_faces = [
        face([1, lx], [0, 1])?,
        face([1, lx], [ly + 1, 1])?,
        face([ly, 1], [1, 0])?,
        face([ly, 1], [1, lx + 1])?,
    ];
    let sends: Vec<_> = send_faces.iter().map(|t| (t, 1, 0)).collect();
    let ghosts: Vec<_> = ghost_faces.iter().map(|t| (t, 1, 0)).collect();

    let mut start = vec![0.0; sizes[0] * sizes[1]];
    for y in 0..ly {
        for x in 0..lx {
            start[(y + 1) * w + x + 1] = initial(y0 + y, x0 + x, ny, nx);
        }
    }
    // Two fields, each with its exchange: the field is the send buffer (its faces sent), a
    // buffer of the same shape receives the neighbours' faces into its ghost cells. A step
    // reads one field and writes the other's interior.
    let exchange = |field: Vec<f64>| {
        grid.neighbor_alltoallw_init(
            OwnedLayoutBlocks::new(field, &sends)?,
            OwnedLayoutBlocks::new(vec![0.0; sizes[0] * sizes[1]], &ghosts)?,
        )
    };
    let mut fields = [exchange(start.clone())?, exchange(start)?];

    grid.barrier()?;
    let (began, mut in_mpi) = (Instant::now(), Duration::ZERO);
    for s in 0..steps {
        let [a, b] = &mut fields;
        let (now, next) = if s % 2 == 0 { (a, b) } else { (b, a) };
        let out = next.send_mut();
        let t = Instant::now();
        let running = now.start()?;
        in_mpi += t.elapsed();
        // The cells none of whose neighbours is a ghost, while the faces travel.
        let u = running.send();
        for y in 2..ly {
            for x in 2..lx {
                let i = y * w + x;
                out[i] = step(u[i], u[i - w], u[i + w], u[i - 1], u[i + 1]);
            }
        }
        let t = Instant::now();
        running.wait()?;
        in_mpi += t.elapsed();
        // The block's edge rows and columns, each neighbour from the field or the ghosts.
        let (u, g) = now.send_recv_mut();
        let at = |y: usize, x: usize| {
            let i = y * w + x;
            if y == 0 || y == ly + 1 || x == 0 || x == lx + 1 {
                g[i]
            } else {
                u[i]
            }
        };
        let edge = (1..=lx)
            .flat_map(|x| [(1, x), (ly, x)])
            .chain((2..ly).flat_map(|y| [(y, 1), (y, lx)]));
        for (y, x) in edge {
            out[y * w + x] = step(
                at(y, x),
                at(y - 1, x),
                at(y + 1, x),
                at(y, x - 1),
                at(y, x + 1),
            );
        }
    }
    let elapsed = began.elapsed();

    // Against the serial run: the largest difference over every process's block.
    let whole = serial(ny, nx, steps);
    let last = fields[steps % 2].send_mut();
    let mut diff: f64 = 0.0;
    for y in 0..ly {
        for x in 0..lx {
            let mine = last[(y + 1) * w + x + 1];
            diff = diff.max((mine - whole[(y0 + y + 1) * (nx + 2) + x0 + x + 1]).abs());
        }
    }
    let mut worst = [0.0f64];
    world.allreduce(&[diff], &mut worst, Max)?;
    let mut shares = [0.0f64; 2];
    let mine = [in_mpi.as_secs_f64(), elapsed.as_secs_f64()];
    world.allreduce(&mine, &mut shares, Sum)?;
    if world.rank() == 0 {
        let per_step = elapsed.as_secs_f64() / steps.max(1) as f64;
        println!(
            "halo_exchange: {nx} x {ny} on {} x {} processes, {steps} steps ({}): {:.1} us per step, {:.0} % in MPI; largest difference from the serial run {worst:.1e}",
            dims[0],
            dims[1],
            if fields[0].is_emulated() {
                "emulated"
            } else {
                "persistent"
            },
            per_step * 1e6,
            100.0 * shares[0] / shares[1].max(f64::MIN_POSITIVE),
            worst = worst[0],
        );
    }
    assert!(
        worst[0] <= 1e-12,
        "the parallel field differs from the serial run by {}",
        worst[0]
    );
    Ok(())
}
