//! The twin of `benches/c/file_io.c` through ferrompi: a distributed array of doubles written
//! to one file and read back at explicit offsets, collectively (`write_at_all`,
//! `read_at_all`) and independently (`write_at`, `read_at`), timed the same way (from a
//! barrier to the end of the slowest process's call), after one untimed collective write that
//! makes the file. `tools/io-bench.sh` runs both,
//! interleaved, at 1–4 processes.
//!
//! `file_io PATH MIB [ROUNDS]` under `mpirun -n N`.

use ferrompi::io::{AccessMode, File};
use ferrompi::{Communicator, Max, Mpi};

const NAMES: [&str; 4] = ["write_at_all", "read_at_all", "write_at", "read_at"];

fn timed(
    mpi: &Mpi,
    world: &Communicator<'_>,
    file: &File<'_>,
    op: usize,
    at: u64,
    buf: &mut [f64],
) -> f64 {
    world.barrier().expect("barrier");
    let t0 = mpi.wtime();
    match op {
        0 => file.write_at_all(at, buf).expect("write_at_all"),
        1 => assert_eq!(file.read_at_all(at, buf).expect("read_at_all"), buf.len()),
        2 => file.write_at(at, buf).expect("write_at"),
        _ => assert_eq!(file.read_at(at, buf).expect("read_at"), buf.len()),
    }
    let mine = [mpi.wtime() - t0];
    let mut slowest = [0.0];
    world
        .allreduce(&mine, &mut slowest, Max)
        .expect("allreduce");
    slowest[0]
}

fn main() -> ferrompi::Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(mib)) = (
        args.first(),
        args.get(1).and_then(|a| a.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: file_io PATH MIB [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let total = mib * (1 << 20) / 8;
    let first = total * rank / size;
    let count = total * (rank + 1) / size - first;
    // Written at once (not `calloc`'s untouched zero pages), as the C program's loop does.
    let mut buf = vec![-1.0f64; count];
    let file = File::open(&world, path, AccessMode::CREATE | AccessMode::RDWR, None)?;
    // Untimed: the file's pages are made once, so that every timed write overwrites.
    timed(&mpi, &world, &file, 0, (first * 8) as u64, &mut buf);
    for _ in 0..rounds {
        for (op, name) in NAMES.iter().enumerate() {
            for (i, x) in buf.iter_mut().enumerate() {
                *x = if op & 1 == 1 {
                    -1.0
                } else {
                    (first + i + op) as f64
                };
            }
            let t = timed(&mpi, &world, &file, op, (first * 8) as u64, &mut buf);
            if op & 1 == 1 {
                for (i, &x) in buf.iter().enumerate() {
                    assert_eq!(
                        x,
                        (first + i + op - 1) as f64,
                        "the value read at {}",
                        first + i
                    );
                }
            }
            if rank == 0 {
                println!("{name} {t:.6}");
            }
        }
    }
    file.close()
}
