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
//!   through `scope` + `RequestSet` and through `ffi` (16 requests an iteration);
//! - `put`, `put-ffi`: an 8-byte `put_now` (put + flush) under `lock_all`, and the same calls;
//! - `get`, `get-ffi`: an 8-byte `get_now` (get + local flush), and the same calls.
//!
//! With `--test` (as `cargo bench` passes it) it runs every path a few times and checks the
//! results, so the suite knows it works.

use ferrompi::window::Assert;
use ferrompi::{Equivalence, Mpi, RequestSet, RequestStorage, Window, ffi, scope};
use std::hint::black_box;

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
            let out = [1u8; 8];
            let mut into = [0u8; 64];
            let mut storage = RequestStorage::with_capacity(16);
            let (comm, byte) = (world.as_raw(), u8::datatype().as_raw());
            // SAFETY: an immutable constant defined by the shim.
            let mut handles = [unsafe { ffi::ferrompi_MPI_REQUEST_NULL }; 16];
            for _ in 0..iterations {
                if path == "exchange" {
                    storage = scope(|s| -> ferrompi::Result<RequestStorage> {
                        let mut set = RequestSet::from_storage(std::mem::take(&mut storage));
                        for (k, chunk) in into.chunks_mut(8).enumerate() {
                            set.push(world.irecv(s, chunk, me, k as i32)?);
                        }
                        for k in 0..8 {
                            set.push(world.isend(s, &out, me, k)?);
                        }
                        set.wait_all()?;
                        Ok(set.into_storage())
                    })
                    .expect("exchange");
                } else {
                    let (recv, slots) = (into.as_mut_ptr(), handles.as_mut_ptr());
                    // SAFETY: 8 bytes of `into` per receive and a handle slot per operation,
                    // alive until the wait for all of them; `out` is only read.
                    unsafe {
                        for k in 0..8 {
                            let to = recv.add(8 * k).cast();
                            ffi::MPI_Irecv(to, 8, byte, me, k as i32, comm, slots.add(k));
                        }
                        for k in 0..8 {
                            let from = out.as_ptr().cast();
                            ffi::MPI_Isend(from, 8, byte, me, k as i32, comm, slots.add(8 + k));
                        }
                        ffi::MPI_Waitall(16, slots, ffi::ferrompi_MPI_STATUSES_IGNORE);
                    }
                    black_box(&mut handles);
                }
                assert_eq!(into, [1u8; 64], "{path}: every receive got its message");
                into.fill(0);
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
