//! The twin of `benches/c/levels.c` through ferrompi: the same five operations (ping-pong 8 B,
//! allreduce 8 B, barrier, 8 × isend/irecv + wait_all at 8 B, 64 isends in flight at 8 B), timed
//! the same way, in a process of its own, at the thread level named on the command line ("init" is
//! `Mpi::init()`, the crate's default). `tools/thread-levels.sh` runs it beside the C program at
//! every level, interleaved, and prints the per-level costs and the binding's own.
//!
//! `levels [init|single|funneled|serialized|multiple] [ROUNDS]` under `mpirun -n 2`.

use ferrompi::{Communicator, Max, Mpi, RequestSet, RequestStorage, Sum, ThreadLevel, scope};

const NAMES: [&str; 5] = [
    "pingpong8",
    "allreduce8",
    "barrier",
    "exchange8",
    "window64",
];

/// The buffers one operation uses, made once.
struct Buffers {
    buf: [u8; 8],
    recv: [u8; 512],
    storage: RequestStorage,
}

fn once(op: usize, world: &Communicator<'_>, b: &mut Buffers) -> ferrompi::Result<()> {
    let (rank, peer) = (world.rank(), 1 - world.rank());
    match op {
        0 if rank == 0 => {
            world.send(&b.buf, 1, 1)?;
            world.recv(&mut b.buf, 1, 1).map(drop)
        }
        0 => {
            world.recv(&mut b.buf, 0, 1)?;
            world.send(&b.buf, 0, 1)
        }
        1 => {
            let mut y = [0.0f64];
            world.allreduce(&[1.0f64], &mut y, Sum)
        }
        2 => world.barrier(),
        3 => {
            let (buf, recv) = (&b.buf, &mut b.recv);
            scope(|s| {
                let mut set = RequestSet::with_storage(s, &mut b.storage);
                for (k, chunk) in recv.chunks_exact_mut(8).take(8).enumerate() {
                    world.irecv_into(&mut set, s, chunk, peer, k as i32)?;
                }
                for k in 0..8 {
                    world.isend_into(&mut set, s, buf, peer, k)?;
                }
                set.wait_all()
            })
        }
        _ => {
            let (buf, recv) = (&b.buf, &mut b.recv);
            scope(|s| {
                let mut set = RequestSet::with_storage(s, &mut b.storage);
                if rank == 0 {
                    for _ in 0..64 {
                        world.isend_into(&mut set, s, buf, 1, 2)?;
                    }
                } else {
                    for chunk in recv.chunks_exact_mut(8) {
                        world.irecv_into(&mut set, s, chunk, 0, 2)?;
                    }
                }
                set.wait_all()
            })?;
            let mut ack = [0u8];
            if rank == 0 {
                world.recv(&mut ack, 1, 3).map(drop)
            } else {
                world.send(&ack, 0, 3)
            }
        }
    }
}

/// The slower rank's seconds for `iters` iterations of `op`.
fn block(op: usize, iters: u64, mpi: &Mpi, world: &Communicator<'_>, b: &mut Buffers) -> f64 {
    let start = mpi.wtime();
    for _ in 0..iters {
        once(op, world, b).expect("operation");
    }
    let mut slow = [0.0];
    world
        .allreduce(&[mpi.wtime() - start], &mut slow, Max)
        .expect("max");
    slow[0]
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let level = args.next().unwrap_or_else(|| "init".into());
    let rounds: usize = args
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30)
        .max(1);
    let mpi = match level.as_str() {
        "init" => Mpi::init(),
        "single" => Mpi::init_thread(ThreadLevel::Single),
        "funneled" => Mpi::init_thread(ThreadLevel::Funneled),
        "serialized" => Mpi::init_thread(ThreadLevel::Serialized),
        "multiple" => Mpi::init_thread(ThreadLevel::Multiple),
        other => panic!("unknown level {other}: init|single|funneled|serialized|multiple"),
    }
    .expect("MPI init");
    let world = mpi.world();
    assert_eq!(world.size(), 2, "levels needs 2 ranks");
    let mut b = Buffers {
        buf: [1; 8],
        recv: [0; 512],
        storage: RequestStorage::with_capacity(64),
    };
    for (op, name) in NAMES.iter().enumerate() {
        let mut iters = 1u64;
        while block(op, iters, &mpi, &world, &mut b) <= 2e-3 && iters <= 1 << 24 {
            iters *= 2;
        }
        let mut blocks: Vec<f64> = (0..rounds)
            .map(|_| block(op, iters, &mpi, &world, &mut b))
            .collect();
        blocks.sort_by(f64::total_cmp);
        if world.rank() == 0 {
            println!("{name} {:.1}", blocks[rounds / 2] / iters as f64 * 1e9);
        }
    }
    if world.rank() == 0 {
        println!("provided {:?}", mpi.thread_level());
    }
}
