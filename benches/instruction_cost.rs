//! The instructions ferrompi's own code executes per operation, the steady measure beside the
//! timings: `tools/instruction-cost.sh` runs this program under callgrind, once per path and
//! at two iteration counts, and counts only the instructions executed in this program's own
//! code (ferrompi inlines into it; MPI's libraries are not counted). The difference between a
//! ferrompi path and its `ffi` twin, per operation, is the binding's work: checks, thread gate,
//! request bookkeeping. Unlike a time, it is the same on every run.
//!
//! `instruction_cost <path> <iterations>`, one process (a singleton or `mpirun -n 1`), where
//! `path` is one of
//!
//! - `exchange`, `exchange-ffi`: 8 receives and 8 sends to this process and a wait for all,
//!   through `scope` + `RequestSet` and through `ffi` (16 requests an iteration; the exchange
//!   `benches/request_cost.rs` times);
//! - `put`, `put-ffi`: an 8-byte `put_now` (put + flush) under `lock_all`, and the same calls;
//! - `get`, `get-ffi`: an 8-byte `get_now` (get + local flush), and the same calls.
//!
//! With `--test` (as `cargo bench` passes it) it runs every path a few times and checks the
//! results, so the suite knows it works.

mod exchange;

use exchange::Exchange;
use ferrompi::window::Assert;
use ferrompi::{Equivalence, Mpi, Window, ffi};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let test = args.iter().any(|a| a == "--test");
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mpi = Mpi::init().expect("MPI init");
    if test {
        for path in PATHS {
            run(&mpi, path, 3);
        }
        println!("instruction_cost: every path ran");
        return;
    }
    let [path, iterations] = words[..] else {
        panic!("usage: instruction_cost <path> <iterations> (paths: {PATHS:?})");
    };
    assert!(
        PATHS.contains(&path),
        "unknown path {path:?} (paths: {PATHS:?})"
    );
    run(
        &mpi,
        path,
        iterations.parse().expect("iterations: a number"),
    );
}

const PATHS: [&str; 6] = [
    "exchange",
    "exchange-ffi",
    "put",
    "put-ffi",
    "get",
    "get-ffi",
];

fn run(mpi: &Mpi, path: &str, iterations: usize) {
    let world = mpi.world();
    let me = world.rank();
    match path {
        "exchange" | "exchange-ffi" => {
            let mut exchange = Exchange::default();
            for _ in 0..iterations {
                if path == "exchange" {
                    exchange.ferrompi(&world);
                } else {
                    exchange.ffi(&world);
                }
                exchange.delivered(path);
            }
        }
        _ => {
            let win = Window::<u8>::allocate(&world, 64).expect("allocate");
            let mut buf = vec![7u8; 8];
            let (raw, byte) = (win.as_raw(), u8::datatype().as_raw());
            win.lock_all(Assert::empty(), |epoch| {
                // One loop per path, so that choosing the path costs nothing per iteration.
                match path {
                    "put" => (0..iterations).for_each(|_| epoch.put_now(&buf, me, 0).expect("put")),
                    "get" => {
                        (0..iterations).for_each(|_| epoch.get_now(&mut buf, me, 0).expect("get"))
                    }
                    "put-ffi" => (0..iterations).for_each(|_| {
                        // SAFETY: `buf` holds 8 bytes, the window 64, under lock_all; each put
                        // completes before the next (flush).
                        unsafe {
                            ffi::MPI_Put(buf.as_ptr().cast(), 8, byte, me, 0, 8, byte, raw);
                            ffi::MPI_Win_flush(me, raw);
                        }
                    }),
                    _ => (0..iterations).for_each(|_| {
                        // SAFETY: as for the put; each get completes before the next.
                        unsafe {
                            ffi::MPI_Get(buf.as_mut_ptr().cast(), 8, byte, me, 0, 8, byte, raw);
                            ffi::MPI_Win_flush_local(me, raw);
                        }
                    }),
                }
            })
            .expect("lock_all");
            let mut seen = [0u8; 8];
            win.lock_all(Assert::empty(), |epoch| epoch.get_now(&mut seen, me, 0))
                .expect("lock_all")
                .expect("get");
            let expected = if path.starts_with("put") { 7 } else { 0 };
            assert_eq!(seen, [expected; 8], "{path}: the window holds what was put");
        }
    }
}
