//! The instructions ferrompi's own code executes per operation, the steady measure beside the
//! timings: `tools/instruction-cost.sh` runs this program under callgrind, once per path and
//! at two iteration counts, and counts only the instructions executed in this program's own
//! code (ferrompi inlines into it; MPI's libraries are not counted). The difference between a
//! ferrompi path and its `ffi` twin, per operation, is the binding's work: checks, thread gate,
//! request bookkeeping. Unlike a time, it is the same on every run. Every operation measured
//! is also called from a second site that never runs ([`second_call_sites`]), so that what is
//! counted is what a program that calls it from several places gets.
//!
//! `instruction_cost <path> <iterations>`, one process (a singleton or `mpirun -n 1`), where
//! `path` is one of
//!
//! - `exchange`, `exchange-ffi`: 8 receives and 8 sends to this process and a wait for all,
//!   through `scope` + `RequestSet` and through `ffi` (16 requests an iteration; the exchange
//!   `benches/request_cost.rs` times);
//! - `exchange-into` (and `exchange-into-ffi`, the same as `exchange-ffi`): the same exchange
//!   with each request started straight into the set (`irecv_into`, `isend_into`);
//! - `put`, `put-ffi`: an 8-byte `put_now` (put + flush) under `lock_all`, and the same calls;
//! - `get`, `get-ffi`: an 8-byte `get_now` (get + local flush), and the same calls;
//! - `put-target`, `get-target` (and their `-ffi` twins, the same calls as above): the same
//!   `put_now` and `get_now` through `epoch.target(rank)`, made once before the loop;
//! - `fetch-and-op`, `fetch-and-op-target` (and `-ffi` twins: `MPI_Fetch_and_op` +
//!   `MPI_Win_flush`): a `u64` counter incremented by `fetch_and_op`, through the epoch and
//!   through `epoch.target(rank)`;
//! - `allreduce`, `allreduce-ffi`: a blocking sum of one `f64` (the comparison's 8-byte row);
//! - `allreduce-in-place`, `allreduce-in-place-ffi`: the same with `MPI_IN_PLACE`;
//! - `allreduce-init`, `allreduce-init-ffi`: start + wait of a persistent allreduce of one
//!   `f64` (ferrompi's `allreduce_init`; `MPI_Start` + `MPI_Wait` on the C reference's request);
//! - `iallreduce`, `iallreduce-ffi`: `iallreduce` of one `f64` in a scope and its `wait`;
//! - `bcast`, `bcast-ffi`: a blocking broadcast of 8 bytes (`u8`, as the comparison's rows);
//! - `alltoall`, `alltoall-ffi`: a blocking alltoall of one `f64` per pair;
//! - `allgatherv`, `allgatherv-ffi`: a blocking allgatherv of one `f64` per rank;
//! - `sendrecv`, `sendrecv-ffi`: 8 bytes to and from this process, with its status;
//! - `send-recv`, `send-recv-ffi`: a blocking `send` of 8 bytes to this process and a blocking
//!   `recv` of 8 bytes from it, the ping-pong's two calls, each met by a nonblocking call made
//!   through `ffi` on both paths; the receive's status is dropped (the `ffi` twin ignores it,
//!   as the C reference does).
//!
//! With `--test` (as `cargo bench` passes it) it runs every path a few times and checks the
//! results, so the suite knows it works.

mod exchange;

use exchange::Exchange;
use ferrompi::op::Sum;
use ferrompi::window::Assert;
use ferrompi::{Equivalence, Mpi, Partition, RequestSet, RequestStorage, Window, ffi};
use std::ffi::{c_int, c_void};

// The C reference (benches/c/reference.c, linked into every benchmark by build.rs): a
// persistent allreduce made in C, for the `allreduce-init-ffi` twin.
unsafe extern "C" {
    fn ferrompi_c_allreduce_init(send: *const f64, recv: *mut f64, count: c_int) -> *mut c_void;
    fn ferrompi_c_request_free(request: *mut c_void);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let test = args.iter().any(|a| a == "--test");
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mpi = Mpi::init().expect("MPI init");
    if std::hint::black_box(false) {
        second_call_sites(&mpi.world());
    }
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

const PATHS: [&str; 34] = [
    "exchange",
    "exchange-ffi",
    "exchange-into",
    "exchange-into-ffi",
    "put",
    "put-ffi",
    "get",
    "get-ffi",
    "put-target",
    "put-target-ffi",
    "get-target",
    "get-target-ffi",
    "fetch-and-op",
    "fetch-and-op-ffi",
    "fetch-and-op-target",
    "fetch-and-op-target-ffi",
    "allreduce",
    "allreduce-ffi",
    "allreduce-in-place",
    "allreduce-in-place-ffi",
    "allreduce-init",
    "allreduce-init-ffi",
    "iallreduce",
    "iallreduce-ffi",
    "bcast",
    "bcast-ffi",
    "alltoall",
    "alltoall-ffi",
    "allgatherv",
    "allgatherv-ffi",
    "sendrecv",
    "sendrecv-ffi",
    "send-recv",
    "send-recv-ffi",
];

fn run(mpi: &Mpi, path: &str, iterations: usize) {
    let world = mpi.world();
    match path {
        "exchange" | "exchange-ffi" | "exchange-into" | "exchange-into-ffi" => {
            let mut exchange = Exchange::default();
            for _ in 0..iterations {
                match path {
                    "exchange" => exchange.ferrompi(&world),
                    "exchange-into" => exchange.ferrompi_into(&world),
                    _ => exchange.ffi(&world),
                }
                exchange.delivered(path);
            }
        }
        "put" | "put-ffi" | "get" | "get-ffi" | "put-target" | "put-target-ffi" | "get-target"
        | "get-target-ffi" => window(&world, path, iterations),
        "fetch-and-op" | "fetch-and-op-ffi" | "fetch-and-op-target" | "fetch-and-op-target-ffi" => {
            counter(&world, path, iterations)
        }
        "send-recv" => send_recv(
            &world,
            iterations,
            |world, out, me| world.send(out, me, 1).expect("send"),
            |world, into, me| {
                world.recv(into, me, 2).expect("recv");
            },
        ),
        "send-recv-ffi" => send_recv(
            &world,
            iterations,
            |world, out, me| {
                let double = f64::datatype().as_raw();
                // SAFETY: `out` holds the one `f64` the call names, borrowed for it.
                unsafe { ffi::MPI_Send(out.as_ptr().cast(), 1, double, me, 1, world.as_raw()) };
            },
            |world, into, me| {
                let (double, status) = (f64::datatype().as_raw(), ffi::MPI_STATUS_IGNORE);
                // SAFETY: as above; the status is ignored, as in the C reference.
                unsafe {
                    ffi::MPI_Recv(
                        into.as_mut_ptr().cast(),
                        1,
                        double,
                        me,
                        2,
                        world.as_raw(),
                        status,
                    )
                };
            },
        ),
        _ => blocking(&world, path, iterations),
    }
}

/// Every ferrompi operation the paths measure, called once more, with the same types, from
/// a site that never runs (`main` guards it with `black_box(false)`, which the compiler cannot
/// see through). A program calls an operation from many places; without a second call site,
/// LLVM inlines a generic function called from one place whatever its size (the "last call"
/// bonus), and the counts would show a cost no real program gets. `recv` was once out of line
/// in the comparison benchmark, which calls it from four places, while this program, which
/// called it from one, counted it inlined.
#[inline(never)]
fn second_call_sites(world: &ferrompi::Communicator<'_>) {
    let me = world.rank();
    let (send, mut got) = ([1.5f64], [0.0f64]);
    // The exchange's calls in a scope of its own: a program's scope closure is called from
    // one place (calling `Exchange::ferrompi` again would call its closure from two).
    let (out, mut into, mut storage) = ([1u8; 8], [0u8; 8], RequestStorage::with_capacity(2));
    ferrompi::scope(|s| -> ferrompi::Result<()> {
        let mut set = RequestSet::with_storage(s, &mut storage);
        set.push(world.irecv(s, &mut into, me, 0)?);
        set.push(world.isend(s, &out, me, 0)?);
        set.wait_all()
    })
    .expect("exchange");
    ferrompi::scope(|s| -> ferrompi::Result<()> {
        let mut set = RequestSet::with_storage(s, &mut storage);
        world.irecv_into(&mut set, s, &mut into, me, 0)?;
        world.isend_into(&mut set, s, &out, me, 0)?;
        set.wait_all()
    })
    .expect("exchange");
    world.send(&send, me, 1).expect("send");
    world.recv(&mut got, me, 2).expect("recv");
    world.allreduce(&send, &mut got, Sum).expect("allreduce");
    world.allreduce_in_place(&mut got, Sum).expect("allreduce");
    let mut persistent = world
        .allreduce_init(vec![1.5f64], vec![0.0f64], Sum)
        .expect("allreduce_init");
    let status = persistent.start().and_then(|a| a.wait());
    std::hint::black_box(status.expect("start/wait"));
    let status = ferrompi::scope(|s| world.iallreduce(s, &send, &mut got, Sum)?.wait());
    std::hint::black_box(status.expect("iallreduce"));
    world.bcast(&mut [0u8; 8], 0).expect("bcast");
    world.alltoall(&send, &mut got).expect("alltoall");
    let blocks = Partition::<f64>::uniform(1, 1).expect("partition");
    world
        .allgatherv(&send, &mut got, &blocks)
        .expect("allgatherv");
    let status = world.sendrecv(&send, me, 0, &mut got, me, 0);
    std::hint::black_box(status.expect("sendrecv"));
    let (bytes, mut buf) = (
        Window::<u8>::allocate(world, 64).expect("allocate"),
        [0u8; 8],
    );
    let counter = Window::<u64>::allocate(world, 1).expect("allocate");
    bytes
        .lock_all(Assert::empty(), |epoch| {
            epoch.put_now(&buf, me, 0).expect("put");
            epoch.get_now(&mut buf, me, 0).expect("get");
            let to = epoch.target(me).expect("target");
            to.put_now(&buf, 0).expect("put");
            to.get_now(&mut buf, 0).expect("get");
        })
        .expect("lock_all");
    counter
        .lock_all(Assert::empty(), |epoch| {
            epoch.fetch_and_op(1, me, 0, Sum).expect("fetch_and_op");
            let at = epoch.target(me).expect("target");
            at.fetch_and_op(1, 0, Sum).expect("fetch_and_op");
        })
        .expect("lock_all");
}

/// `iterations` of a blocking send (`send`) and a blocking receive (`recv`) of one `f64` on
/// one process, each met by a nonblocking call made through `ffi` on both paths (the same
/// instructions, so they cancel in the difference): MPICH's blocking send to oneself does not
/// return before its receive is posted. Each path is its own function, so that the two are
/// compiled alike.
#[inline(never)]
fn send_recv<'a>(
    world: &ferrompi::Communicator<'a>,
    iterations: usize,
    send: impl Fn(&ferrompi::Communicator<'a>, &[f64], i32),
    recv: impl Fn(&ferrompi::Communicator<'a>, &mut [f64], i32),
) {
    let (me, comm, double) = (world.rank(), world.as_raw(), f64::datatype().as_raw());
    let (out, mut landed) = ([1.5f64], [0.0f64]);
    for _ in 0..iterations {
        let mut request = ffi::MPI_REQUEST_NULL;
        // SAFETY: `landed` outlives the request, which the wait completes before it is read.
        unsafe {
            ffi::MPI_Irecv(
                landed.as_mut_ptr().cast(),
                1,
                double,
                me,
                1,
                comm,
                &mut request,
            );
        }
        send(world, &out, me);
        // SAFETY: the request above, completed here.
        unsafe { ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE) };
        assert_eq!(landed, out, "send: what arrived");
        landed = [0.0];
        // SAFETY: `out` outlives the request, which the wait completes.
        unsafe { ffi::MPI_Isend(out.as_ptr().cast(), 1, double, me, 2, comm, &mut request) };
        recv(world, &mut landed, me);
        // SAFETY: the request above, completed here.
        unsafe { ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE) };
        assert_eq!(landed, out, "recv: what arrived");
        landed = [0.0];
    }
}

/// The RMA paths: `put_now`/`get_now` of 8 bytes to this process under `lock_all`, then a
/// check of what the window holds.
fn window(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let me = world.rank();
    let win = Window::<u8>::allocate(world, 64).expect("allocate");
    let mut buf = vec![7u8; 8];
    let (raw, byte) = (win.as_raw(), u8::datatype().as_raw());
    win.lock_all(Assert::empty(), |epoch| {
        // One loop per path, so that choosing the path costs nothing per iteration.
        match path {
            "put" => (0..iterations).for_each(|_| epoch.put_now(&buf, me, 0).expect("put")),
            "get" => (0..iterations).for_each(|_| epoch.get_now(&mut buf, me, 0).expect("get")),
            "put-target" => {
                let to = epoch.target(me).expect("target");
                (0..iterations).for_each(|_| to.put_now(&buf, 0).expect("put"));
            }
            "get-target" => {
                let to = epoch.target(me).expect("target");
                (0..iterations).for_each(|_| to.get_now(&mut buf, 0).expect("get"));
            }
            "put-ffi" | "put-target-ffi" => (0..iterations).for_each(|_| {
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

/// The atomic paths: `fetch_and_op` of a `u64` counter at this process under `lock_all` (the
/// call, then `MPI_Win_flush`), then a check of the count.
fn counter(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let me = world.rank();
    let win = Window::<u64>::allocate(world, 1).expect("allocate");
    let (raw, word) = (win.as_raw(), u64::datatype().as_raw());
    let last = win.lock_all(Assert::empty(), |epoch| {
        // One loop per path, as in `window`; each keeps the last value fetched.
        let mut last = None;
        match path {
            "fetch-and-op" => (0..iterations).for_each(|_| {
                last = Some(epoch.fetch_and_op(1, me, 0, Sum).expect("fetch_and_op"));
            }),
            "fetch-and-op-target" => {
                let at = epoch.target(me).expect("target");
                (0..iterations).for_each(|_| {
                    last = Some(at.fetch_and_op(1, 0, Sum).expect("fetch_and_op"));
                });
            }
            _ => (0..iterations).for_each(|_| {
                let (one, mut old) = (1u64, 0u64);
                // SAFETY: one `u64` each side, alive for the call; the window holds one at
                // displacement 0; under lock_all; flushed before the next.
                unsafe {
                    ffi::MPI_Fetch_and_op(
                        (&raw const one).cast(),
                        (&raw mut old).cast(),
                        word,
                        me,
                        0,
                        ffi::MPI_SUM,
                        raw,
                    );
                    ffi::MPI_Win_flush(me, raw);
                }
                last = Some(old);
            }),
        }
        last
    });
    let last = last.expect("lock_all");
    assert_eq!(
        last,
        iterations.checked_sub(1).map(|n| n as u64),
        "{path}: the count"
    );
}

/// The blocking paths: one call per iteration, each result checked after the loop.
fn blocking(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let me = world.rank();
    let (comm, double) = (world.as_raw(), f64::datatype().as_raw());
    let (send, mut got) = ([1.5f64], [0.0f64]);
    let (out, into) = (send.as_ptr().cast(), got.as_mut_ptr().cast());
    // Each `ffi` call below reads one `f64` of `send` and writes one of `got` (and a local
    // status), all alive for the call, on this process's world of one rank.
    match path {
        "allreduce" => (0..iterations).for_each(|_| {
            world.allreduce(&send, &mut got, Sum).expect("allreduce");
        }),
        // SAFETY: as said above the match.
        "allreduce-ffi" => (0..iterations).for_each(|_| unsafe {
            ffi::MPI_Allreduce(out, into, 1, double, ffi::MPI_SUM, comm);
        }),
        "allreduce-in-place" => (0..iterations).for_each(|_| {
            got = send;
            world.allreduce_in_place(&mut got, Sum).expect("allreduce");
        }),
        // SAFETY: as said above the match (`MPI_IN_PLACE`: `got` is input and result).
        "allreduce-in-place-ffi" => (0..iterations).for_each(|_| unsafe {
            into.cast::<f64>().write(send[0]);
            let in_place = ffi::MPI_IN_PLACE;
            ffi::MPI_Allreduce(in_place, into, 1, double, ffi::MPI_SUM, comm);
        }),
        "allreduce-init" => {
            let mut persistent = world
                .allreduce_init(vec![1.5f64], vec![0.0f64], Sum)
                .expect("allreduce_init");
            (0..iterations).for_each(|_| {
                let status = persistent
                    .start()
                    .and_then(|a| a.wait())
                    .expect("start/wait");
                std::hint::black_box(status);
            });
            got.copy_from_slice(persistent.recv());
        }
        "allreduce-init-ffi" => {
            // SAFETY: as said above the match; the request, made by the C reference on
            // `send` and `got`, is inactive between iterations and freed once, after them.
            unsafe {
                let request = ferrompi_c_allreduce_init(send.as_ptr(), got.as_mut_ptr(), 1);
                assert!(
                    !request.is_null(),
                    "this MPI has no persistent allreduce for C"
                );
                let request = request.cast::<ffi::MPI_Request>();
                (0..iterations).for_each(|_| {
                    let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
                    ffi::MPI_Start(request);
                    ffi::MPI_Wait(request, status.as_mut_ptr());
                    std::hint::black_box(status);
                });
                ferrompi_c_request_free(request.cast());
            }
        }
        "iallreduce" => (0..iterations).for_each(|_| {
            let status = ferrompi::scope(|s| world.iallreduce(s, &send, &mut got, Sum)?.wait())
                .expect("iallreduce");
            std::hint::black_box(status);
        }),
        // SAFETY: as said above the match; the request completes before the next iteration.
        "iallreduce-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut request = ffi::MPI_REQUEST_NULL;
            ffi::MPI_Iallreduce(out, into, 1, double, ffi::MPI_SUM, comm, &mut request);
            ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
        }),
        "bcast" | "bcast-ffi" => {
            let (mut bytes, byte) = ([7u8; 8], u8::datatype().as_raw());
            let at = bytes.as_mut_ptr().cast();
            if path == "bcast" {
                (0..iterations).for_each(|_| world.bcast(&mut bytes, 0).expect("bcast"));
            } else {
                // SAFETY: `bytes` holds the 8 bytes the call names, alive for the loop.
                (0..iterations).for_each(|_| unsafe {
                    ffi::MPI_Bcast(at, 8, byte, 0, comm);
                });
            }
            assert_eq!(bytes, [7; 8], "{path}: the root's bytes are unchanged");
            return; // no `f64` moves here, so the check after the match is not this path's
        }
        "alltoall" => (0..iterations).for_each(|_| {
            world.alltoall(&send, &mut got).expect("alltoall");
        }),
        // SAFETY: as said above the match.
        "alltoall-ffi" => (0..iterations).for_each(|_| unsafe {
            ffi::MPI_Alltoall(out, 1, double, into, 1, double, comm);
        }),
        "allgatherv" => {
            let blocks = Partition::<f64>::uniform(1, 1).expect("partition");
            (0..iterations).for_each(|_| {
                world
                    .allgatherv(&send, &mut got, &blocks)
                    .expect("allgatherv");
            })
        }
        "allgatherv-ffi" => {
            let (counts, displs) = ([1], [0]);
            let (counts, displs) = (counts.as_ptr(), displs.as_ptr());
            // SAFETY: as said above the match; one block of one `f64` at 0.
            (0..iterations).for_each(|_| unsafe {
                ffi::MPI_Allgatherv(out, 1, double, into, counts, displs, double, comm);
            })
        }
        "sendrecv" => (0..iterations).for_each(|_| {
            let status = world
                .sendrecv(&send, me, 0, &mut got, me, 0)
                .expect("sendrecv");
            std::hint::black_box(status);
        }),
        // SAFETY: as said above the match.
        "sendrecv-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            ffi::MPI_Sendrecv(
                out,
                1,
                double,
                me,
                0,
                into,
                1,
                double,
                me,
                0,
                comm,
                status.as_mut_ptr(),
            );
            std::hint::black_box(status);
        }),
        other => panic!("unknown path {other:?}"),
    }
    assert_eq!(got, send, "{path}: the result is what was sent (one rank)");
}
