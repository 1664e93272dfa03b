//! rsmpi's instructions per request operation, the comparison beside ferrompi's:
//! `tools/instruction-cost.sh` runs this program under callgrind as it runs
//! `benches/instruction_cost.rs`, `rsmpi-instruction-cost <path> <iterations>`, and takes the
//! difference between a path and its `-ffi` twin. The paths are ferrompi's rows that rsmpi
//! has, written the way rsmpi's documentation writes them, with the same meeting calls
//! through `ffi` and the same checks:
//!
//! - `pair`, `exchange`: one receive and one send, and 8 of each, of 8 bytes to this process
//!   in a `multiple_scope`, added to its `RequestCollection` and waited for with `wait_all`;
//! - `isend`, `issend`, `irecv`: one request and its `wait` per iteration, all in one `scope`,
//!   met by a blocking `MPI_Recv` or `MPI_Send`; `irecv-test`: the receive completed by
//!   `test`; `isend-scope`: the `isend` in a `scope` of its own per iteration;
//! - `iallreduce`, `ibarrier`, `ibcast`: a nonblocking collective and its `wait`;
//! - `sendrecv`: 8 bytes to and from this process, with its status.

use mpi::ffi;
use mpi::traits::*;
use std::mem::MaybeUninit;

const PATHS: [&str; 22] = [
    "pair",
    "pair-ffi",
    "exchange",
    "exchange-ffi",
    "isend",
    "isend-ffi",
    "isend-scope",
    "isend-scope-ffi",
    "issend",
    "issend-ffi",
    "irecv",
    "irecv-ffi",
    "irecv-test",
    "irecv-test-ffi",
    "iallreduce",
    "iallreduce-ffi",
    "ibarrier",
    "ibarrier-ffi",
    "ibcast",
    "ibcast-ffi",
    "sendrecv",
    "sendrecv-ffi",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    if args.iter().any(|a| a == "--test") {
        for path in PATHS {
            run(&world, path, 3);
        }
        println!("rsmpi-instruction-cost: every path ran");
        return;
    }
    if args.first().map(String::as_str) == Some("phases") {
        let [_, low, high, paths @ ..] = &args[..] else {
            panic!("usage: rsmpi-instruction-cost phases <low> <high> <path>...");
        };
        let counts = [1, low.parse().expect("low: a number"), high.parse().expect("high: a number")];
        for path in paths {
            assert!(PATHS.contains(&path.as_str()), "unknown path {path:?}");
            for iterations in counts {
                run(&world, path, iterations);
                ferrompi_cost_mark();
            }
        }
        return;
    }
    let [path, iterations] = &args[..] else {
        panic!("usage: rsmpi-instruction-cost <path> <iterations> (paths: {PATHS:?})");
    };
    assert!(PATHS.contains(&path.as_str()), "unknown path {path:?}");
    run(
        &world,
        path,
        iterations.parse().expect("iterations: a number"),
    );
}

fn run(world: &mpi::topology::SimpleCommunicator, path: &str, iterations: usize) {
    // Every row compiled alone, as in `benches/instruction_cost.rs`: the path is a constant
    // there, so each instantiation holds its own arm of the row function's `match`.
    macro_rules! alone {
        ($($row:ident: $($name:literal)*;)*) => {
            match path {
                $($($name => return alone(|| $row(world, $name, iterations)),)*)*
                other => panic!("unknown path {other:?}"),
            }
        };
    }
    alone! {
        sets: "pair" "pair-ffi" "exchange" "exchange-ffi";
        sends: "isend" "isend-ffi" "isend-scope" "isend-scope-ffi" "issend" "issend-ffi";
        receives: "irecv" "irecv-ffi" "irecv-test" "irecv-test-ffi";
        others: "iallreduce" "iallreduce-ffi" "ibarrier" "ibarrier-ffi" "ibcast" "ibcast-ffi"
            "sendrecv" "sendrecv-ffi";
    }
}

/// The end of a phase, where callgrind dumps its counts (see `benches/instruction_cost.rs`).
#[no_mangle]
#[inline(never)]
pub extern "C" fn ferrompi_cost_mark() {
    std::hint::black_box(());
}

/// Runs `body` in a function of its own (see `benches/instruction_cost.rs`).
#[inline(never)]
fn alone<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// `pairs` receives and as many sends of 8 bytes to this process, waited for together.
#[inline(always)]
fn sets(world: &mpi::topology::SimpleCommunicator, path: &str, iterations: usize) {
    let pairs = if path.starts_with("pair") { 1 } else { 8 };
    let me = world.this_process();
    let (comm, byte) = (world.as_raw(), u8::equivalent_datatype().as_raw());
    // SAFETY (each `RSMPI_*` read): a constant rsmpi's C shim exports, never written.
    let statuses_ignore = unsafe { ffi::RSMPI_STATUSES_IGNORE };
    let out = [1u8; 8];
    let mut into = [0u8; 64];
    let mut handles = [unsafe { ffi::RSMPI_REQUEST_NULL }; 16];
    let twin = path.ends_with("-ffi");
    for _ in 0..iterations {
        let into = &mut into[..8 * pairs];
        if twin {
            let at = handles.as_mut_ptr();
            // SAFETY: 8 bytes of `into` per receive and a handle slot per operation, all alive
            // until the wait for all of them.
            unsafe {
                for (k, chunk) in into.chunks_exact_mut(8).enumerate() {
                    let to = chunk.as_mut_ptr().cast();
                    ffi::MPI_Irecv(to, 8, byte, 0, k as i32, comm, at.add(k));
                }
                for k in 0..pairs {
                    let from = out.as_ptr().cast();
                    ffi::MPI_Isend(from, 8, byte, 0, k as i32, comm, at.add(pairs + k));
                }
                ffi::MPI_Waitall(2 * pairs as i32, at, statuses_ignore);
            }
        } else {
            mpi::request::multiple_scope(2 * pairs, |scope, requests| {
                for (k, chunk) in into.chunks_exact_mut(8).enumerate() {
                    requests.add(me.immediate_receive_into_with_tag(scope, chunk, k as i32));
                }
                for k in 0..pairs {
                    requests.add(me.immediate_send_with_tag(scope, &out, k as i32));
                }
                // The statuses' vector cannot outlive the scope its entries borrow from.
                let mut done = Vec::new();
                requests.wait_all(&mut done);
            });
        }
        assert!(into.iter().all(|&b| b == 1), "{path}: what arrived");
        into.fill(0);
    }
}

/// One send of an `f64` to this process per iteration, met by a blocking `MPI_Recv`.
#[inline(always)]
fn sends(world: &mpi::topology::SimpleCommunicator, path: &str, iterations: usize) {
    let me = world.this_process();
    let (comm, double) = (world.as_raw(), f64::equivalent_datatype().as_raw());
    // SAFETY: a constant rsmpi's C shim exports, never written.
    let ignore = unsafe { ffi::RSMPI_STATUS_IGNORE };
    let out = [1.5f64];
    let mut landed = [0.0f64];
    let mut meet = || {
        // SAFETY: one `f64` to receive into, alive for the call; the status is ignored.
        unsafe { ffi::MPI_Recv(landed.as_mut_ptr().cast(), 1, double, 0, 3, comm, ignore) };
        assert_eq!(landed, out, "{path}: what arrived");
        landed = [0.0];
    };
    let from = out.as_ptr().cast();
    // One loop per path, so that choosing the path costs nothing per iteration.
    match path {
        // One scope for all, as ferrompi's rows.
        "isend" => mpi::request::scope(|scope| {
            for _ in 0..iterations {
                let sending = me.immediate_send_with_tag(scope, &out, 3);
                meet();
                std::hint::black_box(sending.wait());
            }
        }),
        "issend" => mpi::request::scope(|scope| {
            for _ in 0..iterations {
                let sending = me.immediate_synchronous_send_with_tag(scope, &out, 3);
                meet();
                std::hint::black_box(sending.wait());
            }
        }),
        "isend-scope" => (0..iterations).for_each(|_| {
            let status = mpi::request::scope(|scope| {
                let sending = me.immediate_send_with_tag(scope, &out, 3);
                meet();
                sending.wait()
            });
            std::hint::black_box(status);
        }),
        _ => {
            let start = if path == "issend-ffi" {
                ffi::MPI_Issend
            } else {
                ffi::MPI_Isend
            };
            for _ in 0..iterations {
                // SAFETY: a constant rsmpi's C shim exports, never written.
                let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
                let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
                // SAFETY: `out` outlives the request, which the wait completes.
                unsafe { start(from, 1, double, 0, 3, comm, &mut request) };
                meet();
                // SAFETY: the request above; MPI writes the status.
                unsafe { ffi::MPI_Wait(&mut request, status.as_mut_ptr()) };
                std::hint::black_box(status);
            }
        }
    }
}

/// One receive of an `f64` from this process per iteration, met by a blocking `MPI_Send`, in
/// one scope for all (each into a slot of its own, as the scope borrows them all).
#[inline(always)]
fn receives(world: &mpi::topology::SimpleCommunicator, path: &str, iterations: usize) {
    let me = world.this_process();
    let (comm, double) = (world.as_raw(), f64::equivalent_datatype().as_raw());
    let out = [2.5f64];
    let mut arrivals = vec![0.0f64; iterations];
    // SAFETY: one `f64` to send, alive for the call.
    let meet = || unsafe { ffi::MPI_Send(out.as_ptr().cast(), 1, double, 0, 3, comm) };
    // SAFETY: a constant rsmpi's C shim exports, never written.
    let null = unsafe { ffi::RSMPI_REQUEST_NULL };
    match path {
        "irecv" => mpi::request::scope(|scope| {
            for slot in arrivals.iter_mut() {
                let receiving = me.immediate_receive_into_with_tag(scope, slot, 3);
                meet();
                std::hint::black_box(receiving.wait());
            }
        }),
        "irecv-test" => mpi::request::scope(|scope| {
            for slot in arrivals.iter_mut() {
                let mut receiving = me.immediate_receive_into_with_tag(scope, slot, 3);
                meet();
                loop {
                    match receiving.test() {
                        Ok(status) => {
                            std::hint::black_box(status);
                            break;
                        }
                        Err(again) => receiving = again,
                    }
                }
            }
        }),
        "irecv-test-ffi" => arrivals.iter_mut().for_each(|slot| {
            let (mut request, mut status) = (null, MaybeUninit::<ffi::MPI_Status>::uninit());
            let into = (slot as *mut f64).cast();
            // SAFETY: `slot` outlives the request, which is complete before it is read.
            unsafe { ffi::MPI_Irecv(into, 1, double, 0, 3, comm, &mut request) };
            meet();
            let mut flag = 0;
            while flag == 0 {
                // SAFETY: the request above; MPI writes the flag and the status.
                unsafe { ffi::MPI_Test(&mut request, &mut flag, status.as_mut_ptr()) };
            }
            std::hint::black_box(status);
        }),
        _ => arrivals.iter_mut().for_each(|slot| {
            let (mut request, mut status) = (null, MaybeUninit::<ffi::MPI_Status>::uninit());
            let into = (slot as *mut f64).cast();
            // SAFETY: `slot` outlives the request, which is complete before it is read.
            unsafe { ffi::MPI_Irecv(into, 1, double, 0, 3, comm, &mut request) };
            meet();
            // SAFETY: the request above; MPI writes the status.
            unsafe { ffi::MPI_Wait(&mut request, status.as_mut_ptr()) };
            std::hint::black_box(status);
        }),
    }
    assert!(
        arrivals.iter().all(|&x| x == out[0]),
        "{path}: what arrived"
    );
}

/// The nonblocking collectives, in one scope for all (each into a buffer of its own; their
/// statuses, which say nothing, dropped as the `ffi` twins ignore them), and `sendrecv`.
#[inline(always)]
fn others(world: &mpi::topology::SimpleCommunicator, path: &str, iterations: usize) {
    let me = world.this_process();
    let (comm, double) = (world.as_raw(), f64::equivalent_datatype().as_raw());
    // SAFETY: predefined handles, read once.
    let (byte, sum, ignore, null) = unsafe {
        (
            u8::equivalent_datatype().as_raw(),
            ffi::RSMPI_SUM,
            ffi::RSMPI_STATUS_IGNORE,
            ffi::RSMPI_REQUEST_NULL,
        )
    };
    let (send, mut got) = ([1.5f64], [0.0f64]);
    let mut results = vec![
        0.0f64;
        if path.starts_with("iallreduce") {
            iterations
        } else {
            0
        }
    ];
    let mut bytes = vec![
        7u8;
        if path.starts_with("ibcast") {
            8 * iterations
        } else {
            0
        }
    ];
    let out = send.as_ptr().cast();
    // One loop per path, so that choosing the path costs nothing per iteration.
    match path {
        "iallreduce" => mpi::request::scope(|scope| {
            for slot in results.iter_mut() {
                let sum = mpi::collective::SystemOperation::sum();
                world
                    .immediate_all_reduce_into(scope, &send, slot, sum)
                    .wait();
            }
        }),
        "ibarrier" => (0..iterations).for_each(|_| {
            world.immediate_barrier().wait();
        }),
        "ibcast" => mpi::request::scope(|scope| {
            for chunk in bytes.chunks_exact_mut(8) {
                me.immediate_broadcast_into(scope, chunk).wait();
            }
        }),
        "sendrecv" => (0..iterations).for_each(|_| {
            let status =
                mpi::point_to_point::send_receive_into_with_tags(&send, &me, 0, &mut got, &me, 0);
            std::hint::black_box(status);
        }),
        // SAFETY (the `ffi` twins): each call reads one `f64` of `send` or 8 bytes of a chunk
        // and writes one `f64`, all alive until the request completes.
        "iallreduce-ffi" => results.iter_mut().for_each(|slot| unsafe {
            let (mut request, into) = (null, (slot as *mut f64).cast());
            ffi::MPI_Iallreduce(out, into, 1, double, sum, comm, &mut request);
            ffi::MPI_Wait(&mut request, ignore);
        }),
        "ibarrier-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut request = null;
            ffi::MPI_Ibarrier(comm, &mut request);
            ffi::MPI_Wait(&mut request, ignore);
        }),
        "ibcast-ffi" => bytes.chunks_exact_mut(8).for_each(|chunk| unsafe {
            let mut request = null;
            ffi::MPI_Ibcast(chunk.as_mut_ptr().cast(), 8, byte, 0, comm, &mut request);
            ffi::MPI_Wait(&mut request, ignore);
        }),
        "sendrecv-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            let (into, status_at) = (got.as_mut_ptr().cast(), status.as_mut_ptr());
            ffi::MPI_Sendrecv(out, 1, double, 0, 0, into, 1, double, 0, 0, comm, status_at);
            std::hint::black_box(status);
        }),
        other => panic!("unknown path {other:?}"),
    }
    assert!(results.iter().all(|&x| x == send[0]), "{path}: the result");
    assert!(
        bytes.iter().all(|&b| b == 7),
        "{path}: the root's bytes are unchanged"
    );
    if path.starts_with("sendrecv") {
        assert_eq!(got, send, "{path}: what arrived");
    }
}
