//! The instructions ferrompi's own code executes per operation, the steady measure beside the
//! timings: `tools/instruction-cost.sh` runs this program under callgrind, each path at two
//! iteration counts, and counts only the instructions executed in this program's own
//! code (ferrompi inlines into it; MPI's libraries are not counted). The difference between a
//! ferrompi path and its `ffi` twin, per operation, is the binding's work: checks, thread gate,
//! request bookkeeping. Unlike a time, it is the same on every run. Every operation measured
//! is also called from a second site that never runs ([`second_call_sites`]), so that what is
//! counted is what a program that calls it from several places gets.
//!
//! `instruction_cost <path> <iterations>`, or `instruction_cost phases <low> <high> <path>...`
//! (each path once to warm up, then `low` and `high` times, with [`ferrompi_cost_mark`] after
//! each run), one process (a singleton or `mpirun -n 1`), where `path` is one of
//!
//! - `exchange`, `exchange-ffi`: 8 receives and 8 sends to this process and a wait for all,
//!   through `scope` + `RequestSet` and through `ffi` (16 requests an iteration; the exchange
//!   `benches/request_cost.rs` times);
//! - `exchange-into` (and `exchange-into-ffi`, the same as `exchange-ffi`): the same exchange
//!   with each request started straight into the set (`irecv_into`, `isend_into`);
//! - `pair`, `pair-ffi`: the smallest set, one receive and one send in a scope + `RequestSet`
//!   (with `exchange`, what a set adds per request and per wait);
//! - `pair-shared` (and `pair-shared-ffi`, the same calls as `pair-ffi`): the same two
//!   requests per iteration, all in one scope and one set, waited for and cleared each time
//!   (each receive into a slot of its own, as the scope borrows them all): what a reused set
//!   adds per request without a scope and a set of its own;
//! - `isend`, `issend`, `irecv` (and `-ffi` twins): one request and its `wait` per iteration,
//!   all in one scope, met by a blocking call made through `ffi` on both paths (`MPI_Recv`,
//!   `MPI_Send`);
//! - `isend-scope` (and `isend-scope-ffi`, the same as `isend-ffi`): the same `isend` in a
//!   scope of its own per iteration (what a scope adds);
//! - `irecv-test`, `irecv-test-ffi`: the receive completed by `test` (`MPI_Test`);
//! - `isend-owned`, `irecv-owned` (and `-ffi` twins, the same calls as `isend-ffi`,
//!   `irecv-ffi`): the request owns its vector, handed back by `wait`;
//! - `send-init`, `recv-init` (and `-ffi` twins): `start` + `wait` of a persistent send or
//!   receive made once, met as above;
//! - `ibarrier`, `ibcast` (and `-ffi` twins): a nonblocking collective and its `wait`, in one
//!   scope for all iterations;
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
//! - `iallreduce`, `iallreduce-ffi`: `iallreduce` of one `f64` and its `wait`, in one scope
//!   for all iterations;
//! - `bcast`, `bcast-ffi`: a blocking broadcast of 8 bytes (`u8`, as the comparison's rows);
//! - `bcast-struct`, `bcast-generic` (and `-ffi` twins): a blocking broadcast of one derived
//!   struct, non-generic and generic, against a struct datatype made by hand before the loop;
//! - `send-struct`, `send-struct-ffi`: a blocking `send` of one derived struct to this process,
//!   met by a receive of the hand-made datatype posted through `ffi` on both paths;
//! - `alltoall`, `alltoall-ffi`: a blocking alltoall of one `f64` per pair;
//! - `allgatherv`, `allgatherv-ffi`: a blocking allgatherv of one `f64` per rank;
//! - `neighbor-alltoall`, `neighbor-alltoall-ffi`: a blocking neighbourhood all-to-all of one
//!   `f64` per neighbour on a periodic ring of this one process (two neighbours: itself);
//! - `neighbor-alltoallw`, `neighbor-alltoallw-ffi`: the same exchange as a
//!   `neighbor_alltoallw` of two one-`f64` layouts each way (a halo exchange's call);
//! - `neighbor-init`, `neighbor-init-ffi`: start + wait of a persistent
//!   `neighbor_alltoall` of one `f64` per neighbour, and the same as a nonblocking
//!   `MPI_Ineighbor_alltoall` + `MPI_Wait` (what every persistent path at least costs);
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
use ferrompi::{
    Equivalence, Mpi, Partition, RequestSet, RequestStorage, SharedWindow, Window, ffi,
};
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
    if let ["phases", low, high, paths @ ..] = &words[..] {
        let counts = [
            1,
            low.parse().expect("low: a number"),
            high.parse().expect("high: a number"),
        ];
        for path in paths {
            assert!(
                PATHS.contains(path),
                "unknown path {path:?} (paths: {PATHS:?})"
            );
            for iterations in counts {
                run(&mpi, path, iterations);
                ferrompi_cost_mark();
            }
        }
        return;
    }
    let [path, iterations] = words[..] else {
        panic!(
            "usage: instruction_cost <path> <iterations> | phases <low> <high> <path>... \
             (paths: {PATHS:?})"
        );
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

const PATHS: [&str; 74] = [
    "exchange",
    "exchange-ffi",
    "exchange-into",
    "exchange-into-ffi",
    "pair",
    "pair-ffi",
    "pair-shared",
    "pair-shared-ffi",
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
    "isend-owned",
    "isend-owned-ffi",
    "irecv-owned",
    "irecv-owned-ffi",
    "send-init",
    "send-init-ffi",
    "recv-init",
    "recv-init-ffi",
    "ibarrier",
    "ibarrier-ffi",
    "ibcast",
    "ibcast-ffi",
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
    "bcast-struct",
    "bcast-struct-ffi",
    "bcast-generic",
    "bcast-generic-ffi",
    "send-struct",
    "send-struct-ffi",
    "alltoall",
    "alltoall-ffi",
    "allgatherv",
    "allgatherv-ffi",
    "neighbor-alltoall",
    "neighbor-alltoall-ffi",
    "neighbor-alltoallw",
    "neighbor-alltoallw-ffi",
    "neighbor-init",
    "neighbor-init-ffi",
    "sendrecv",
    "sendrecv-ffi",
    "send-recv",
    "send-recv-ffi",
    "shared-alloc",
    "shared-alloc-ffi",
];

fn run(mpi: &Mpi, path: &str, iterations: usize) {
    let world = mpi.world();
    // Every row is compiled alone (see `alone`): the path is a constant there, so each
    // instantiation holds its own arm of the row function's `match`, and nothing else.
    macro_rules! alone {
        ($($row:ident: $($name:literal)*;)*) => {
            match path {
                $($($name => return alone(|| $row(&world, $name, iterations)),)*)*
                _ => {}
            }
        };
    }
    alone! {
        exchange: "exchange" "exchange-ffi" "exchange-into" "exchange-into-ffi";
        pair: "pair" "pair-ffi" "pair-shared" "pair-shared-ffi";
        sends: "isend" "isend-ffi" "isend-scope" "isend-scope-ffi" "issend" "issend-ffi"
            "isend-owned" "isend-owned-ffi" "send-init" "send-init-ffi";
        receives: "irecv" "irecv-ffi" "irecv-test" "irecv-test-ffi" "irecv-owned"
            "irecv-owned-ffi" "recv-init" "recv-init-ffi";
        nonblocking_collectives: "ibarrier" "ibarrier-ffi" "ibcast" "ibcast-ffi";
        window: "put" "put-ffi" "get" "get-ffi" "put-target" "put-target-ffi" "get-target"
            "get-target-ffi";
        counter: "fetch-and-op" "fetch-and-op-ffi" "fetch-and-op-target"
            "fetch-and-op-target-ffi";
        shared: "shared-alloc" "shared-alloc-ffi";
        blocking: "allreduce" "allreduce-ffi" "allreduce-in-place" "allreduce-in-place-ffi"
            "allreduce-init" "allreduce-init-ffi" "iallreduce" "iallreduce-ffi" "bcast"
            "bcast-ffi" "bcast-struct" "bcast-struct-ffi" "bcast-generic" "bcast-generic-ffi"
            "send-struct" "send-struct-ffi"
            "alltoall" "alltoall-ffi" "allgatherv" "allgatherv-ffi" "sendrecv"
            "sendrecv-ffi";
    }
    // The neighbourhood rows make a derived datatype: they take the environment too.
    macro_rules! alone_with_mpi {
        ($row:ident: $($name:literal)*) => {
            match path {
                $($name => return alone(|| $row(mpi, $name, iterations)),)*
                _ => {}
            }
        };
    }
    alone_with_mpi! {
        neighborhood: "neighbor-alltoall" "neighbor-alltoall-ffi" "neighbor-alltoallw"
            "neighbor-alltoallw-ffi" "neighbor-init" "neighbor-init-ffi"
    }
    match path {
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
        other => panic!("unknown path {other:?}"),
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
    let mut buf = [0u8; 8];
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
    ferrompi::scope(|s| -> ferrompi::Result<()> {
        let mut set = RequestSet::with_storage(s, &mut storage);
        set.push(world.irecv(s, &mut into, me, 0)?);
        set.push(world.isend(s, &out, me, 0)?);
        set.wait_all()
    })
    .expect("pair");
    let done = ferrompi::scope(|s| -> ferrompi::Result<()> {
        let sending = world.isend(s, &send, me, 3)?;
        let sending_sync = world.issend(s, &send, me, 3)?;
        let mut receiving = world.irecv(s, &mut got, me, 3)?;
        while receiving.test()?.is_none() {}
        sending.wait()?;
        sending_sync.wait()?;
        world.ibarrier(s)?.wait()?;
        world.ibcast(s, &mut buf, 0)?.wait().map(drop)
    });
    done.expect("single requests");
    let (sent, status) = world
        .isend_owned(vec![1.5f64], me, 3)
        .expect("isend")
        .wait();
    std::hint::black_box((sent, status.expect("wait")));
    let (landed, status) = world
        .irecv_owned(vec![0.0f64], me, 3)
        .expect("irecv")
        .wait();
    std::hint::black_box((landed, status.expect("wait")));
    let mut sending = world.send_init(vec![1.5f64], me, 3).expect("send_init");
    std::hint::black_box(sending.start().and_then(|a| a.wait()).expect("start"));
    let mut receiving = world.recv_init(vec![0.0f64], me, 3).expect("recv_init");
    std::hint::black_box(receiving.start().and_then(|a| a.wait()).expect("start"));
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
    let node = world.split_shared(0).expect("split_shared");
    drop(SharedWindow::<u8>::allocate(&node, SHARED_BYTES).expect("allocate"));
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

/// A neighbourhood exchange on a periodic ring of this one process (its two neighbours are
/// itself): one `f64` each way, as `neighbor_alltoall`, as `neighbor_alltoallw` of one-value
/// layouts, and as a persistent `neighbor_alltoall_init`; each against the same exchange made
/// through `ffi` on the same communicator.
#[inline(always)]
fn neighborhood(mpi: &Mpi, path: &str, iterations: usize) {
    let ring = mpi
        .world()
        .cart_create(&[1], &[true], false)
        .expect("cart_create")
        .expect("a ring of one");
    let (comm, double) = (ring.as_raw(), f64::datatype().as_raw());
    let (send, mut got) = ([1.5f64, 2.5], [0.0f64; 2]);
    let (out, into) = (send.as_ptr().cast(), got.as_mut_ptr().cast());
    let one = ferrompi::DerivedType::contiguous(mpi, 1, f64::datatype()).expect("contiguous");
    let (counts, addresses, types) = ([1, 1], [0 as ffi::MPI_Aint, 8], [one.as_raw(); 2]);
    // Each `ffi` call below reads the two `f64`s of `send` and writes the two of `got`, alive
    // for the call, on a Cartesian communicator of one process.
    match path {
        "neighbor-alltoall" => (0..iterations).for_each(|_| {
            ring.neighbor_alltoall(&send, &mut got)
                .expect("neighbor_alltoall");
        }),
        // SAFETY: as said above the match.
        "neighbor-alltoall-ffi" => (0..iterations).for_each(|_| unsafe {
            ffi::MPI_Neighbor_alltoall(out, 1, double, into, 1, double, comm);
        }),
        "neighbor-alltoallw" => {
            let layouts = [(&one, 1, 0), (&one, 1, 8)];
            let faces = ferrompi::LayoutBlocks::new(&send, &layouts).expect("send blocks");
            let mut ghosts =
                ferrompi::LayoutBlocksMut::new(&mut got, &layouts).expect("receive blocks");
            (0..iterations).for_each(|_| {
                ring.neighbor_alltoallw(&faces, &mut ghosts)
                    .expect("neighbor_alltoallw");
            })
        }
        // SAFETY: as said above the match: two blocks of one `f64` at bytes 0 and 8.
        "neighbor-alltoallw-ffi" => (0..iterations).for_each(|_| unsafe {
            let (c, a, t) = (counts.as_ptr(), addresses.as_ptr(), types.as_ptr());
            ffi::MPI_Neighbor_alltoallw(out, c, a, t, into, c, a, t, comm);
        }),
        "neighbor-init" => (|| -> ferrompi::Result<()> {
            let mut persistent = ring.neighbor_alltoall_init(send.to_vec(), vec![0.0f64; 2])?;
            for _ in 0..iterations {
                persistent.start()?.wait()?;
            }
            got.copy_from_slice(persistent.recv());
            Ok(())
        })()
        .expect("neighbor_alltoall_init"),
        // SAFETY: as said above the match; each request completes before the next starts.
        "neighbor-init-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut request = ffi::MPI_REQUEST_NULL;
            ffi::MPI_Ineighbor_alltoall(out, 1, double, into, 1, double, comm, &mut request);
            ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
        }),
        _ => unreachable!("{path}"),
    }
    std::hint::black_box(got);
}

/// Bytes per process of the shared-window row.
const SHARED_BYTES: usize = 4096;

/// A shared window of 4 KiB per process allocated and freed: `SharedWindow::allocate` (its
/// agreement on the lengths and the room, its segments, the backing of its pages, the zeroing
/// of its own, the `lock_all` it holds) and its drop, against what a C program does before it
/// may use one (allocate, `lock_all`, query every segment, zero its own) and after (unlock,
/// free).
#[inline(always)]
fn shared(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let node = world.split_shared(0).expect("split_shared");
    let (comm, size) = (node.as_raw(), node.size());
    match path {
        "shared-alloc" => (0..iterations).for_each(|_| {
            let window = SharedWindow::<u8>::allocate(&node, SHARED_BYTES).expect("allocate");
            drop(std::hint::black_box(window));
        }),
        // SAFETY: a valid communicator; each window is allocated, used within its own segment
        // (the SHARED_BYTES MPI returned at `base`) and freed.
        "shared-alloc-ffi" => (0..iterations).for_each(|_| unsafe {
            let mut base: *mut u8 = std::ptr::null_mut();
            let mut win = ffi::MPI_WIN_NULL;
            ffi::MPI_Win_allocate_shared(
                SHARED_BYTES as ffi::MPI_Aint,
                1,
                ffi::MPI_INFO_NULL,
                comm,
                (&raw mut base).cast(),
                &mut win,
            );
            ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as c_int, win);
            for r in 0..size {
                let (mut len, mut unit, mut at) = (0, 0, std::ptr::null_mut::<u8>());
                ffi::MPI_Win_shared_query(win, r, &mut len, &mut unit, (&raw mut at).cast());
            }
            std::ptr::write_bytes(base, 0, SHARED_BYTES);
            ffi::MPI_Win_unlock_all(win);
            ffi::MPI_Win_free(&mut win);
        }),
        _ => unreachable!("{path}"),
    }
}

/// The exchange of `benches/exchange`: through a set, started into the set, or through `ffi`.
#[inline(always)]
fn exchange(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let mut exchange = Exchange::default();
    for _ in 0..iterations {
        match path {
            "exchange" => exchange.ferrompi(world),
            "exchange-into" => exchange.ferrompi_into(world),
            _ => exchange.ffi(world),
        }
        exchange.delivered(path);
    }
}

/// The end of a phase: `tools/instruction-cost.sh` has callgrind dump its counts after each
/// call (`--dump-after=ferrompi_cost_mark`), so one process measures many paths, each path's
/// warm-up, `low` and `high` runs in dumps of their own.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn ferrompi_cost_mark() {
    std::hint::black_box(());
}

/// Runs `body` in a function of its own: each path's closure is a type of its own, so each
/// path's loop is compiled alone, and what it compiles to does not depend on the other paths
/// of the same `match` (a shared function once moved a row by 15 instructions when another
/// arm changed).
#[inline(never)]
fn alone<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// The smallest set: one receive and one send of 8 bytes to this process in a scope, pushed
/// into a `RequestSet` and waited for together, and the same calls through `ffi`.
#[inline(always)]
fn pair(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let (me, comm, byte) = (world.rank(), world.as_raw(), u8::datatype().as_raw());
    let (out, mut into) = ([1u8; 8], [0u8; 8]);
    let mut storage = RequestStorage::with_capacity(2);
    let mut handles = [ffi::MPI_REQUEST_NULL; 2];
    if path == "pair-shared" {
        let mut arrivals = vec![[0u8; 8]; iterations];
        ferrompi::scope(|s| -> ferrompi::Result<()> {
            let mut set = RequestSet::with_storage(s, &mut storage);
            for slot in arrivals.iter_mut() {
                set.push(world.irecv(s, slot, me, 0)?);
                set.push(world.isend(s, &out, me, 0)?);
                set.wait_all()?;
                set.clear()?;
            }
            Ok(())
        })
        .expect("pair-shared");
        assert!(arrivals.iter().all(|a| *a == out), "{path}: what arrived");
        return;
    }
    let through_ferrompi = path == "pair";
    for _ in 0..iterations {
        if through_ferrompi {
            ferrompi::scope(|s| -> ferrompi::Result<()> {
                let mut set = RequestSet::with_storage(s, &mut storage);
                set.push(world.irecv(s, &mut into, me, 0)?);
                set.push(world.isend(s, &out, me, 0)?);
                set.wait_all()
            })
            .expect("pair");
        } else {
            let at = handles.as_mut_ptr();
            // SAFETY: 8 bytes each side and a handle slot per operation, all alive until the
            // wait for both.
            unsafe {
                ffi::MPI_Irecv(into.as_mut_ptr().cast(), 8, byte, me, 0, comm, at);
                ffi::MPI_Isend(out.as_ptr().cast(), 8, byte, me, 0, comm, at.add(1));
                ffi::MPI_Waitall(2, at, ffi::MPI_STATUSES_IGNORE);
            }
        }
        assert_eq!(into, out, "{path}: what arrived");
        into = [0; 8];
    }
}

/// One send of an `f64` to this process per iteration, met by a blocking `MPI_Receive`
/// through `ffi` on every path, then its `wait` (the `ffi` twins wait with a status, as
/// ferrompi's `wait` returns one): `isend` and `issend` in a scope of their own,
/// `isend_owned`, and the start of a persistent send.
#[inline(always)]
fn sends(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let (me, comm, double) = (world.rank(), world.as_raw(), f64::datatype().as_raw());
    let out = [1.5f64];
    let mut landed = [0.0f64];
    // The receive that meets each send: the same instructions on every path.
    let mut meet = || {
        // SAFETY: one `f64` to receive into, alive for the call; the status is ignored.
        unsafe {
            let into = landed.as_mut_ptr().cast();
            ffi::MPI_Recv(into, 1, double, me, 3, comm, ffi::MPI_STATUS_IGNORE);
        }
        assert_eq!(landed, out, "{path}: what arrived");
        landed = [0.0];
    };
    let from = out.as_ptr().cast();
    match path {
        // One loop per path, so that choosing the path costs nothing per iteration.
        "isend" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for _ in 0..iterations {
                let sending = world.isend(s, &out, me, 3)?;
                meet();
                sending.wait()?;
            }
            Ok(())
        })
        .expect("isend"),
        "issend" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for _ in 0..iterations {
                let sending = world.issend(s, &out, me, 3)?;
                meet();
                sending.wait()?;
            }
            Ok(())
        })
        .expect("issend"),
        "isend-scope" => (0..iterations).for_each(|_| {
            ferrompi::scope(|s| -> ferrompi::Result<()> {
                let sending = world.isend(s, &out, me, 3)?;
                meet();
                sending.wait()?;
                Ok(())
            })
            .expect("isend");
        }),
        // As a program's fallible function would: errors go up with `?`.
        "isend-owned" => (|| -> ferrompi::Result<()> {
            let mut buffer = vec![1.5f64];
            for _ in 0..iterations {
                let sending = world.isend_owned(buffer, me, 3)?;
                meet();
                let (back, status) = sending.wait();
                status?;
                buffer = back;
            }
            Ok(())
        })()
        .expect("isend_owned"),
        "send-init" => (|| -> ferrompi::Result<()> {
            let mut request = world.send_init(vec![1.5f64], me, 3)?;
            for _ in 0..iterations {
                let sending = request.start()?;
                meet();
                sending.wait()?;
            }
            Ok(())
        })()
        .expect("send_init"),
        "send-init-ffi" => {
            let mut request = ffi::MPI_REQUEST_NULL;
            // SAFETY: `out` outlives the request, freed after the loop; each start completes
            // before the next.
            unsafe { ffi::MPI_Send_init(from, 1, double, me, 3, comm, &mut request) };
            for _ in 0..iterations {
                // SAFETY: as above.
                unsafe { ffi::MPI_Start(&mut request) };
                meet();
                // SAFETY: as above; a send's status says nothing a program wants.
                unsafe { ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE) };
            }
            // SAFETY: inactive, freed once.
            unsafe { ffi::MPI_Request_free(&mut request) };
        }
        _ => {
            let issend = path == "issend-ffi";
            let start = if issend {
                ffi::MPI_Issend
            } else {
                ffi::MPI_Isend
            };
            for _ in 0..iterations {
                let mut request = ffi::MPI_REQUEST_NULL;
                // SAFETY: `out` outlives the request, which the wait completes.
                unsafe { start(from, 1, double, me, 3, comm, &mut request) };
                meet();
                // SAFETY: the request above; a send's status says nothing a program wants.
                unsafe { ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE) };
            }
        }
    }
}

/// One receive of an `f64` from this process per iteration, met by a blocking `MPI_Send`
/// through `ffi` on every path, then completed: `irecv` in one scope for all of them (each
/// into a slot of its own, as the scope borrows them all), completed by `wait` or by `test`;
/// `irecv_owned`; and the start of a persistent receive. What arrived is checked after.
#[inline(always)]
fn receives(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let (me, comm, double) = (world.rank(), world.as_raw(), f64::datatype().as_raw());
    let out = [2.5f64];
    let mut arrivals = vec![0.0f64; iterations];
    // The send that meets each receive: the same instructions on every path.
    let meet = || {
        // SAFETY: one `f64` to send, alive for the call.
        unsafe { ffi::MPI_Send(out.as_ptr().cast(), 1, double, me, 3, comm) };
    };
    match path {
        "irecv" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for slot in arrivals.iter_mut() {
                let receiving = world.irecv(s, std::slice::from_mut(slot), me, 3)?;
                meet();
                std::hint::black_box(receiving.wait()?.source());
            }
            Ok(())
        })
        .expect("irecv"),
        "irecv-test" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for slot in arrivals.iter_mut() {
                let mut receiving = world.irecv(s, std::slice::from_mut(slot), me, 3)?;
                meet();
                loop {
                    if let Some(status) = receiving.test()? {
                        std::hint::black_box(status.source());
                        break;
                    }
                }
            }
            Ok(())
        })
        .expect("irecv"),
        // As a program's fallible function would: errors go up with `?`.
        "irecv-owned" => (|| -> ferrompi::Result<()> {
            let mut buffer = vec![0.0f64];
            for slot in arrivals.iter_mut() {
                let receiving = world.irecv_owned(buffer, me, 3)?;
                meet();
                let (back, status) = receiving.wait();
                std::hint::black_box(status?.source());
                buffer = back;
                *slot = std::mem::take(&mut buffer[0]);
            }
            Ok(())
        })()
        .expect("irecv_owned"),
        "recv-init" => (|| -> ferrompi::Result<()> {
            let mut request = world.recv_init(vec![0.0f64], me, 3)?;
            for _ in 0..iterations {
                let receiving = request.start()?;
                meet();
                std::hint::black_box(receiving.wait()?.source());
            }
            arrivals.fill(request.buffer()[0]);
            Ok(())
        })()
        .expect("recv_init"),
        "recv-init-ffi" => {
            let (mut request, mut landed) = (ffi::MPI_REQUEST_NULL, [0.0f64]);
            let into = landed.as_mut_ptr().cast();
            // SAFETY: `landed` outlives the request, freed after the loop; each start completes
            // before the next.
            unsafe { ffi::MPI_Recv_init(into, 1, double, me, 3, comm, &mut request) };
            for _ in 0..iterations {
                let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
                // SAFETY: as above.
                unsafe { ffi::MPI_Start(&mut request) };
                meet();
                // SAFETY: as above.
                unsafe { ffi::MPI_Wait(&mut request, status.as_mut_ptr()) };
                // SAFETY: MPI wrote the status's fields; only the source is read, as a program would.
                std::hint::black_box(unsafe { (&raw const (*status.as_ptr()).MPI_SOURCE).read() });
            }
            // SAFETY: inactive, freed once.
            unsafe { ffi::MPI_Request_free(&mut request) };
            arrivals.fill(landed[0]);
        }
        "irecv-test-ffi" => arrivals.iter_mut().for_each(|slot| {
            let mut request = ffi::MPI_REQUEST_NULL;
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: `slot` outlives the request, which is complete before it is read.
            unsafe {
                ffi::MPI_Irecv(
                    (slot as *mut f64).cast(),
                    1,
                    double,
                    me,
                    3,
                    comm,
                    &mut request,
                )
            };
            meet();
            let mut flag = 0;
            while flag == 0 {
                // SAFETY: the request above; MPI writes the flag and the status.
                unsafe { ffi::MPI_Test(&mut request, &mut flag, status.as_mut_ptr()) };
            }
            // SAFETY: MPI wrote the status's fields; only the source is read, as a program would.
            std::hint::black_box(unsafe { (&raw const (*status.as_ptr()).MPI_SOURCE).read() });
        }),
        _ => arrivals.iter_mut().for_each(|slot| {
            let mut request = ffi::MPI_REQUEST_NULL;
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: `slot` outlives the request, which is complete before it is read.
            unsafe {
                ffi::MPI_Irecv(
                    (slot as *mut f64).cast(),
                    1,
                    double,
                    me,
                    3,
                    comm,
                    &mut request,
                )
            };
            meet();
            // SAFETY: the request above; MPI writes the status.
            unsafe { ffi::MPI_Wait(&mut request, status.as_mut_ptr()) };
            // SAFETY: MPI wrote the status's fields; only the source is read, as a program would.
            std::hint::black_box(unsafe { (&raw const (*status.as_ptr()).MPI_SOURCE).read() });
        }),
    }
    assert!(
        arrivals.iter().all(|&x| x == out[0]),
        "{path}: what arrived"
    );
}

/// A nonblocking collective and its `wait` per iteration, all in one scope (each into a
/// buffer of its own, as the scope borrows them all): a barrier, and a broadcast of 8 bytes.
/// A collective's status says nothing: the `ffi` twins wait without one, and the ferrompi
/// paths drop the empty status `wait` returns.
#[inline(always)]
fn nonblocking_collectives(world: &ferrompi::Communicator<'_>, path: &str, iterations: usize) {
    let comm = world.as_raw();
    // Only the broadcast has buffers (and checks them after).
    let chunks = if path.starts_with("ibcast") {
        iterations
    } else {
        0
    };
    let (mut bytes, byte) = (vec![7u8; 8 * chunks], u8::datatype().as_raw());
    match path {
        "ibarrier" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for _ in 0..iterations {
                world.ibarrier(s)?.wait()?;
            }
            Ok(())
        })
        .expect("ibarrier"),
        "ibcast" => ferrompi::scope(|s| -> ferrompi::Result<()> {
            for chunk in bytes.chunks_exact_mut(8) {
                world.ibcast(s, chunk, 0)?.wait()?;
            }
            Ok(())
        })
        .expect("ibcast"),
        "ibcast-ffi" => bytes.chunks_exact_mut(8).for_each(|chunk| {
            let mut request = ffi::MPI_REQUEST_NULL;
            // SAFETY: `chunk` holds the 8 bytes the broadcast names, alive until its wait.
            unsafe {
                ffi::MPI_Ibcast(chunk.as_mut_ptr().cast(), 8, byte, 0, comm, &mut request);
                ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
            }
        }),
        _ => (0..iterations).for_each(|_| {
            let mut request = ffi::MPI_REQUEST_NULL;
            // SAFETY: a barrier has no buffer; the wait completes it.
            unsafe {
                ffi::MPI_Ibarrier(comm, &mut request);
                ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
            }
        }),
    }
    assert!(
        bytes.iter().all(|&b| b == 7),
        "{path}: the root's bytes are unchanged"
    );
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
#[inline(always)]
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
#[inline(always)]
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

/// A struct with padding (4 bytes at its end), as a derived struct's row moves it.
#[derive(Equivalence, Clone, Copy)]
#[repr(C)]
struct Particle {
    position: [f64; 3],
    id: u32,
}

/// A generic struct: its datatype is kept per instantiation in the crate's table.
#[derive(Equivalence, Clone, Copy)]
struct Point<T> {
    x: T,
    y: T,
}

/// A committed struct datatype made through `ffi`, as a C program makes one: one element of
/// each `(offset, datatype)`, resized to `size` bytes. Kept until `MPI_Finalize`.
fn handmade_struct(fields: &[(isize, ffi::MPI_Datatype)], size: isize) -> ffi::MPI_Datatype {
    let lengths = vec![1 as c_int; fields.len()];
    let offsets: Vec<ffi::MPI_Aint> = fields.iter().map(|&(at, _)| at as ffi::MPI_Aint).collect();
    let types: Vec<ffi::MPI_Datatype> = fields.iter().map(|&(_, t)| t).collect();
    let (mut joined, mut whole) = (ffi::MPI_DATATYPE_NULL, ffi::MPI_DATATYPE_NULL);
    // SAFETY: three arrays of `fields.len()` entries; MPI writes each new handle.
    unsafe {
        ffi::MPI_Type_create_struct(
            fields.len() as c_int,
            lengths.as_ptr(),
            offsets.as_ptr(),
            types.as_ptr(),
            &mut joined,
        );
        ffi::MPI_Type_create_resized(joined, 0, size as ffi::MPI_Aint, &mut whole);
        ffi::MPI_Type_commit(&mut whole);
    }
    whole
}

/// The blocking paths: one call per iteration, each result checked after the loop.
#[inline(always)]
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
        // As a program's fallible function would: errors go up with `?`. A collective's
        // status says nothing: dropped, as the `ffi` twin ignores it.
        "allreduce-init" => (|| -> ferrompi::Result<()> {
            let mut persistent = world.allreduce_init(vec![1.5f64], vec![0.0f64], Sum)?;
            for _ in 0..iterations {
                persistent.start()?.wait()?;
            }
            got.copy_from_slice(persistent.recv());
            Ok(())
        })()
        .expect("allreduce_init"),
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
                    ffi::MPI_Start(request);
                    ffi::MPI_Wait(request, ffi::MPI_STATUS_IGNORE);
                });
                ferrompi_c_request_free(request.cast());
            }
        }
        // One scope for all, each result in a slot of its own (the scope borrows them all).
        "iallreduce" | "iallreduce-ffi" => {
            let mut results = vec![0.0f64; iterations];
            if path == "iallreduce" {
                ferrompi::scope(|s| -> ferrompi::Result<()> {
                    for slot in results.iter_mut() {
                        let into = std::slice::from_mut(slot);
                        world.iallreduce(s, &send, into, Sum)?.wait()?;
                    }
                    Ok(())
                })
                .expect("iallreduce");
            } else {
                // SAFETY: as said above the match, into `slot`; each request completes before
                // the next starts.
                results.iter_mut().for_each(|slot| unsafe {
                    let (mut request, into) = (ffi::MPI_REQUEST_NULL, (slot as *mut f64).cast());
                    ffi::MPI_Iallreduce(out, into, 1, double, ffi::MPI_SUM, comm, &mut request);
                    ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
                });
            }
            assert!(results.iter().all(|&x| x == send[0]), "{path}: the result");
            return;
        }
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
        "bcast-struct" | "bcast-struct-ffi" | "bcast-generic" | "bcast-generic-ffi" => {
            // One derived struct per call: its datatype found in its `static` (Particle), or
            // in the table of generic instantiations (Point<f64>); the `ffi` twins pass a
            // struct datatype made by hand before the loop, as a C program would.
            let mut particle = [Particle {
                position: [0.5; 3],
                id: 7,
            }];
            let mut point = [Point { x: 1.5, y: -2.5 }];
            let generic = path.starts_with("bcast-generic");
            let handmade = if generic {
                handmade_struct(&[(0, double), (8, double)], 16)
            } else {
                handmade_struct(
                    &[
                        (0, double),
                        (8, double),
                        (16, double),
                        (24, ffi::MPI_UINT32_T),
                    ],
                    32,
                )
            };
            let at = if generic {
                point.as_mut_ptr().cast::<c_void>()
            } else {
                particle.as_mut_ptr().cast::<c_void>()
            };
            match path {
                "bcast-struct" => (0..iterations).for_each(|_| {
                    world.bcast(&mut particle, 0).expect("bcast of a struct");
                }),
                "bcast-generic" => (0..iterations).for_each(|_| {
                    world
                        .bcast(&mut point, 0)
                        .expect("bcast of a generic struct");
                }),
                // SAFETY: one value of the struct the hand-made datatype describes, alive for
                // the loop.
                _ => (0..iterations).for_each(|_| unsafe {
                    ffi::MPI_Bcast(at, 1, handmade, 0, comm);
                }),
            }
            assert!(
                particle[0].id == 7 && point[0].x == 1.5,
                "{path}: the root's values"
            );
            return;
        }
        "send-struct" | "send-struct-ffi" => {
            // One derived struct per blocking send, its datatype found in its `static`; the
            // receive that meets it is the same `ffi` call on both paths.
            let particle = [Particle {
                position: [0.5; 3],
                id: 7,
            }];
            let mut landed = [Particle {
                position: [0.0; 3],
                id: 0,
            }];
            let handmade = handmade_struct(
                &[
                    (0, double),
                    (8, double),
                    (16, double),
                    (24, ffi::MPI_UINT32_T),
                ],
                32,
            );
            let (from, into) = (
                particle.as_ptr().cast::<c_void>(),
                landed.as_mut_ptr().cast::<c_void>(),
            );
            // One loop per path, each posting the same receive before its send into one
            // request that stays where it is.
            let mut request = ffi::MPI_REQUEST_NULL;
            if path == "send-struct" {
                // As a program's fallible function would: errors go up with `?`.
                (|| -> ferrompi::Result<()> {
                    for _ in 0..iterations {
                        // SAFETY: `landed` holds the one struct the hand-made datatype
                        // describes and outlives the request, which the wait below completes.
                        unsafe { ffi::MPI_Irecv(into, 1, handmade, me, 4, comm, &mut request) };
                        world.send(&particle, me, 4)?;
                        // SAFETY: the request above, completed here.
                        unsafe { ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE) };
                    }
                    Ok(())
                })()
                .expect("send of a struct");
            } else {
                (0..iterations).for_each(|_| {
                    // SAFETY: as above; one struct of the hand-made datatype sent, alive for
                    // the call.
                    unsafe {
                        ffi::MPI_Irecv(into, 1, handmade, me, 4, comm, &mut request);
                        ffi::MPI_Send(from, 1, handmade, me, 4, comm);
                        ffi::MPI_Wait(&mut request, ffi::MPI_STATUS_IGNORE);
                    }
                });
            }
            assert!(
                landed[0].id == 7 && landed[0].position == [0.5; 3],
                "{path}: what arrived"
            );
            return;
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
