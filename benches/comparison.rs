//! ferrompi against the same operations written in C (`benches/c/reference.c`, compiled by
//! `build.rs` with the MPI's flags and `-fno-plt` and linked into this binary; `-fno-plt` makes
//! it call into libmpi through the GOT as rustc does, and `tools/call-form.sh` measures what C's
//! default PLT call saves, 0.4 ns a call here), under `mpirun`, with the
//! MPI-aware criterion harness (`benches/harness`): rank 0 drives criterion, every rank runs
//! each sample, the slowest rank's time counts. Both sides time with `MPI_Wtime`.
//!
//! With 2 ranks: ping-pong, OSU-style windowed bandwidth, 8 × isend/irecv + wait-all, barrier,
//! bcast, allreduce (blocking, `iallreduce` + wait, persistent), allgatherv, alltoall. With more
//! ranks: the collectives. The table gives criterion's medians, the ratio ferrompi / C as the
//! median over interleaved quartets (ferrompi, C, C, ferrompi), the median of the same
//! quartets' differences in ns per operation (steadier than a ratio where whole runs land fast
//! or slow), its target, and the heap
//! allocations of the last measured ferrompi sample (a counting global allocator). Both sides
//! of a row run on the same buffers ([`Shared`]; C's persistent allreduce on those of
//! ferrompi's; put and get on one window; the 64 MiB sum on one shared window), except window
//! creation and the epoch entry (each side its own window) and the private-copy row, whose
//! second side reads a private `Vec` (a claim of the design, Rust on both sides, not C). Beside every
//! row of [`CONTROL_MAX`] bytes or fewer, and the windowed bandwidth, the 8-request exchange and
//! put/get at every size, runs a control, the same MPI calls made from Rust through `ffi` (see
//! [`FFI`]): its columns split ferrompi / C into Rust ffi / C and ferrompi / Rust ffi. It is
//! printed, and written to `$FERROMPI_BENCH_OUT.md` and `.csv`.
//!
//! `tools/bench.sh` runs it on both MPIs with 2 and 4 ranks and builds the report and plots.
//! With `FERROMPI_BENCH_NULL=1` it is its own A/A control (`tools/bench-null.sh`): every row
//! compares its C side with itself, so the ratios show the estimator's noise alone.

mod halo_rows;
mod harness;
mod window_rows;

use ferrompi::window::{Assert, SharedWindow, Window};
use ferrompi::{
    Communicator, Equivalence, Mpi, Partition, RequestSet, RequestStorage, Sum, ffi, scope,
};
use harness::{MpiBench, Session};
use std::cell::RefCell;
use std::ffi::{c_int, c_long, c_void};
use std::rc::Rc;
use std::time::Duration;

#[global_allocator]
static ALLOCATOR: harness::Counting = harness::Counting;

// The C reference (benches/c/reference.c). Each runs `iters` iterations and returns seconds.
unsafe extern "C" {
    fn ferrompi_c_pingpong(iters: c_long, buf: *mut u8, bytes: c_int) -> f64;
    fn ferrompi_c_particle_type() -> ffi::MPI_Datatype;
    fn ferrompi_c_pingpong_typed(
        iters: c_long,
        buf: *mut c_void,
        count: c_int,
        datatype: ffi::MPI_Datatype,
    ) -> f64;
    fn ferrompi_c_bandwidth(
        iters: c_long,
        buf: *mut u8,
        bytes: c_int,
        window: c_int,
        stride: c_long,
        requests: *mut ffi::MPI_Request,
    ) -> f64;
    fn ferrompi_c_exchange8(
        iters: c_long,
        send: *const u8,
        recv: *mut u8,
        bytes: c_int,
        stride: c_long,
        requests: *mut ffi::MPI_Request,
    ) -> f64;
    fn ferrompi_c_barrier(iters: c_long) -> f64;
    fn ferrompi_c_bcast(iters: c_long, buf: *mut u8, bytes: c_int) -> f64;
    fn ferrompi_c_allreduce(iters: c_long, send: *const f64, recv: *mut f64, count: c_int) -> f64;
    fn ferrompi_c_iallreduce(iters: c_long, send: *const f64, recv: *mut f64, count: c_int) -> f64;
    fn ferrompi_c_allreduce_init(send: *const f64, recv: *mut f64, count: c_int) -> *mut c_void;
    fn ferrompi_c_persistent(iters: c_long, request: *mut c_void) -> f64;
    fn ferrompi_c_request_free(request: *mut c_void);
    fn ferrompi_c_allgatherv(
        iters: c_long,
        send: *const f64,
        count: c_int,
        recv: *mut f64,
        counts: *const c_int,
        displs: *const c_int,
    ) -> f64;
    fn ferrompi_c_alltoall(iters: c_long, send: *const f64, recv: *mut f64, count: c_int) -> f64;
    fn ferrompi_c_shared_alloc(iters: c_long, comm: ffi::MPI_Comm, bytes: ffi::MPI_Aint) -> f64;
    fn ferrompi_c_halo(
        iters: c_long,
        cart: ffi::MPI_Comm,
        ly: c_int,
        lx: c_int,
        form: c_int,
    ) -> f64;
    fn ferrompi_c_shared_epoch(iters: c_long, comm: ffi::MPI_Comm) -> f64;
    fn ferrompi_c_shared_sum(
        iters: c_long,
        win: ffi::MPI_Win,
        comm: ffi::MPI_Comm,
        table: *const f64,
        n: c_long,
        sink: *mut f64,
    ) -> f64;
    fn ferrompi_c_rma(
        iters: c_long,
        get: c_int,
        buf: *mut u8,
        bytes: c_int,
        win: ffi::MPI_Win,
    ) -> f64;
}

const PINGPONG: [usize; 6] = [8, 128, 2048, 32768, 524_288, 4_194_304];
const COLLECTIVE: [usize; 5] = [8, 512, 4096, 65536, 1_048_576];
const SMALL: [usize; 3] = [8, 4096, 65536];
const WINDOW: usize = 64;
/// The control beside the small rows: the same MPI calls as the C reference, made from Rust
/// through `ffi` with the binding's datatype and communicator or window, and none of its checks.
/// Against C it shows what Rust calling MPI costs by itself (code layout, buffers, requests of
/// its own except in the persistent row, which runs C's), a second implementation that adds
/// nothing; ferrompi against it shows the binding's own work.
const FFI: &str = "ffi";
/// The largest message with the [`FFI`] control (besides the request and RMA rows, which have
/// it at every size): above it, a call's fixed cost is lost in the copy.
const CONTROL_MAX: usize = 4096;

/// Adds the [`FFI`] control of `group` at `bytes` where the message is small enough.
fn control<'a>(
    bench: &mut MpiBench<'a>,
    group: &str,
    bytes: usize,
    run: impl FnMut(u64) -> Duration + 'a,
) {
    if bytes <= CONTROL_MAX {
        bench.add(group, FFI, bytes, run);
    }
}

/// The handles the [`FFI`] control passes: MPI_COMM_WORLD's, MPI_BYTE, MPI_DOUBLE and MPI_SUM,
/// read once, as a C program's constants are fixed when it is linked.
#[derive(Clone, Copy)]
struct Raw {
    comm: ffi::MPI_Comm,
    byte: ffi::MPI_Datatype,
    double: ffi::MPI_Datatype,
    sum: ffi::MPI_Op,
    status_ignore: *mut ffi::MPI_Status,
}

impl Raw {
    fn of(world: &Communicator<'_>) -> Raw {
        let (sum, status_ignore) = (ffi::MPI_SUM, ffi::MPI_STATUS_IGNORE);
        Raw {
            comm: world.as_raw(),
            byte: u8::datatype().as_raw(),
            double: f64::datatype().as_raw(),
            sum,
            status_ignore,
        }
    }
}

/// `MPI_Wtime`, the clock both sides use.
fn now() -> f64 {
    // SAFETY: MPI_Wtime has no preconditions once MPI is initialised (it is, for the whole run).
    unsafe { ffi::MPI_Wtime() }
}

/// Runs `once` `iters` times and returns the time, by `MPI_Wtime`.
#[inline(always)]
fn timed(iters: u64, mut once: impl FnMut()) -> Duration {
    let start = now();
    for _ in 0..iters {
        once();
    }
    Duration::from_secs_f64(now() - start)
}

/// A buffer that every side of a row (ferrompi, the Rust ffi control, C) uses in turn, so that
/// they all run on the same memory. With a buffer each, the block after a switch of sides ran
/// on colder memory: MPICH's 4 MiB ping-pong at 2 ranks, one round trip per block, took 1.4 to
/// 1.5 times as long in the second block of each pair as in the first, whichever side it was.
type Shared<T> = Rc<RefCell<Vec<T>>>;

fn shared<T: Clone>(value: T, len: usize) -> Shared<T> {
    Rc::new(RefCell::new(vec![value; len]))
}

fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn int(n: usize) -> c_int {
    c_int::try_from(n).expect("fits an int")
}

fn null_requests(n: usize) -> Vec<ffi::MPI_Request> {
    vec![ffi::MPI_REQUEST_NULL; n]
}

/// A C persistent allreduce on the buffers of `owner`, which it keeps alive; the request is
/// freed on drop (before MPI is finalized), before `owner` is.
struct CPersistent<K> {
    request: *mut c_void,
    _owner: K,
}

impl<K> CPersistent<K> {
    /// # Safety
    /// `send` and `recv` point to `n` doubles each, whose storage lives as long as `owner`
    /// and is touched by nothing else while this request is active.
    unsafe fn on(owner: K, send: *const f64, recv: *mut f64, n: usize) -> CPersistent<K> {
        // SAFETY: the caller's contract: buffers of `n` doubles that outlive the request.
        let request = unsafe { ferrompi_c_allreduce_init(send, recv, int(n)) };
        assert!(
            !request.is_null(),
            "this MPI has no persistent allreduce for C"
        );
        CPersistent {
            request,
            _owner: owner,
        }
    }
}

impl<K> Drop for CPersistent<K> {
    fn drop(&mut self) {
        // SAFETY: an inactive request made by `ferrompi_c_allreduce_init`.
        unsafe { ferrompi_c_request_free(self.request) };
    }
}

/// What one table row compares, and its target ratio.
struct Row {
    group: &'static str,
    what: &'static str,
    bytes: usize,
    target: f64,
}

fn point_to_point<'a>(bench: &mut MpiBench<'a>, rows: &mut Vec<Row>, world: &'a Communicator<'a>) {
    let rank = world.rank();
    for bytes in PINGPONG {
        let buf = shared(1u8, bytes);
        let ours = buf.clone();
        bench.add("pingpong", "ferrompi", bytes, move |iters| {
            ping_pong(world, iters, &mut ours.borrow_mut()[..])
        });
        let (theirs, raw) = (buf.clone(), Raw::of(world));
        control(bench, "pingpong", bytes, move |iters| {
            let mut buf = theirs.borrow_mut();
            let (at, count) = (buf.as_mut_ptr().cast(), int(bytes));
            let status = raw.status_ignore;
            timed(iters, || {
                // SAFETY: as the C reference: `buf` holds `bytes` bytes, borrowed for the block.
                unsafe {
                    match rank {
                        0 => {
                            ffi::MPI_Send(at, count, raw.byte, 1, 1, raw.comm);
                            ffi::MPI_Recv(at, count, raw.byte, 1, 1, raw.comm, status);
                        }
                        1 => {
                            ffi::MPI_Recv(at, count, raw.byte, 0, 1, raw.comm, status);
                            ffi::MPI_Send(at, count, raw.byte, 0, 1, raw.comm);
                        }
                        _ => {}
                    }
                }
            })
        });
        bench.add("pingpong", "c", bytes, move |iters| {
            let mut buf = buf.borrow_mut();
            // SAFETY: `buf` holds `bytes` bytes.
            seconds(unsafe { ferrompi_c_pingpong(iters as c_long, buf.as_mut_ptr(), int(bytes)) })
        });
        rows.push(Row {
            group: "pingpong",
            what: "ping-pong round trip",
            bytes,
            target: 1.02,
        });
    }
    for bytes in PINGPONG {
        let stride = bytes.max(1);
        // As in the C reference: rank 0 sends the first `bytes`, rank 1 receives into WINDOW
        // blocks of `stride` bytes.
        let buf = shared(1u8, WINDOW * stride);
        let ours = buf.clone();
        let mut storage = RequestStorage::with_capacity(WINDOW);
        bench.add("bandwidth", "ferrompi", bytes, move |iters| {
            let buf = &mut ours.borrow_mut()[..];
            timed(iters, || {
                scope(|s| {
                    let mut set = RequestSet::with_storage(s, &mut storage);
                    match rank {
                        0 => {
                            let send = &buf[..bytes];
                            for _ in 0..WINDOW {
                                world.isend_into(&mut set, s, send, 1, 2)?;
                            }
                        }
                        1 => {
                            for chunk in buf.chunks_exact_mut(stride) {
                                world.irecv_into(&mut set, s, &mut chunk[..bytes], 0, 2)?;
                            }
                        }
                        _ => {}
                    }
                    set.wait_all()
                })
                .expect("window");
                let mut ack = [0u8];
                match rank {
                    0 => world.recv(&mut ack, 1, 3).map(drop).expect("ack"),
                    1 => world.send(&ack, 0, 3).expect("ack"),
                    _ => {}
                }
            })
        });
        let theirs = buf.clone();
        let mut requests = null_requests(WINDOW);
        let (comm, byte, count, mut ack) =
            (world.as_raw(), u8::datatype().as_raw(), int(bytes), 0u8);
        bench.add("bandwidth", FFI, bytes, move |iters| {
            let mut buf = theirs.borrow_mut();
            let (to, handles, ack) = (buf.as_mut_ptr(), requests.as_mut_ptr(), &raw mut ack);
            timed(iters, || {
                // SAFETY: as the C reference: WINDOW blocks of `stride` bytes in `buf`, WINDOW
                // handles, all alive until the wait for all of them; rank 0 only reads `buf`.
                unsafe {
                    for w in 0..WINDOW {
                        if rank == 0 {
                            ffi::MPI_Isend(
                                to.cast_const().cast(),
                                count,
                                byte,
                                1,
                                2,
                                comm,
                                handles.add(w),
                            );
                        } else {
                            ffi::MPI_Irecv(
                                to.add(w * stride).cast(),
                                count,
                                byte,
                                0,
                                2,
                                comm,
                                handles.add(w),
                            );
                        }
                    }
                    ffi::MPI_Waitall(WINDOW as c_int, handles, ffi::MPI_STATUSES_IGNORE);
                    if rank == 0 {
                        ffi::MPI_Recv(ack.cast(), 1, byte, 1, 3, comm, ffi::MPI_STATUS_IGNORE);
                    } else {
                        ffi::MPI_Send(ack.cast(), 1, byte, 0, 3, comm);
                    }
                }
            })
        });
        let mut requests = null_requests(WINDOW);
        bench.add("bandwidth", "c", bytes, move |iters| {
            let mut buf = buf.borrow_mut();
            // SAFETY: `buf` holds WINDOW blocks of `stride` bytes; `requests` WINDOW handles.
            seconds(unsafe {
                ferrompi_c_bandwidth(
                    iters as c_long,
                    buf.as_mut_ptr(),
                    int(bytes),
                    int(WINDOW),
                    stride as c_long,
                    requests.as_mut_ptr(),
                )
            })
        });
        rows.push(Row {
            group: "bandwidth",
            what: "windowed isend bandwidth (64 in flight)",
            bytes,
            target: 1.05,
        });
    }
    let peer = rank ^ 1;
    for bytes in SMALL {
        let stride = bytes.max(1);
        let (send, recv) = (shared(1u8, bytes), shared(0u8, 8 * stride));
        let (ours_send, ours_recv) = (send.clone(), recv.clone());
        let mut storage = RequestStorage::with_capacity(16);
        bench.add("exchange8", "ferrompi", bytes, move |iters| {
            let (send, recv) = (&ours_send.borrow()[..], &mut ours_recv.borrow_mut()[..]);
            timed(iters, || {
                scope(|s| {
                    let mut set = RequestSet::with_storage(s, &mut storage);
                    for (k, chunk) in recv.chunks_exact_mut(stride).enumerate() {
                        world.irecv_into(&mut set, s, &mut chunk[..bytes], peer, k as i32)?;
                    }
                    for k in 0..8 {
                        world.isend_into(&mut set, s, send, peer, k)?;
                    }
                    set.wait_all()
                })
                .expect("exchange");
            })
        });
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        let mut requests = null_requests(16);
        let (comm, byte, count) = (world.as_raw(), u8::datatype().as_raw(), int(bytes));
        bench.add("exchange8", FFI, bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            let (to, handles) = (recv.as_mut_ptr(), requests.as_mut_ptr());
            timed(iters, || {
                // SAFETY: as the C reference: 8 blocks of `stride` bytes in `recv` and 16
                // handles, alive until the wait for all of them; `send` is only read.
                unsafe {
                    for k in 0..8 {
                        let into = to.add(k * stride).cast();
                        ffi::MPI_Irecv(into, count, byte, peer, k as c_int, comm, handles.add(k));
                    }
                    for k in 0..8 {
                        let from = send.as_ptr().cast();
                        ffi::MPI_Isend(
                            from,
                            count,
                            byte,
                            peer,
                            k as c_int,
                            comm,
                            handles.add(8 + k),
                        );
                    }
                    ffi::MPI_Waitall(16, handles, ffi::MPI_STATUSES_IGNORE);
                }
            })
        });
        let mut requests = null_requests(16);
        bench.add("exchange8", "c", bytes, move |iters| {
            let (send, mut recv) = (send.borrow(), recv.borrow_mut());
            // SAFETY: `recv` holds 8 blocks of `stride` bytes, `send` `bytes`; 16 handles.
            seconds(unsafe {
                ferrompi_c_exchange8(
                    iters as c_long,
                    send.as_ptr(),
                    recv.as_mut_ptr(),
                    int(bytes),
                    stride as c_long,
                    requests.as_mut_ptr(),
                )
            })
        });
        rows.push(Row {
            group: "exchange8",
            what: "8 × isend/irecv + wait_all",
            bytes,
            target: 1.05,
        });
    }
}

/// A particle with 4 bytes of padding at its end, as `#[derive(Equivalence)]` sends it: its
/// fields only (the C side makes the same struct datatype by hand).
#[derive(Equivalence, Clone, Copy)]
#[repr(C)]
struct Particle {
    position: [f64; 3],
    id: u32,
}

/// The same 32 bytes with the padding made a field, so that it is `bytemuck::Pod` and travels
/// as `Bytes<T>` (contiguous bytes, padding included).
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct PodParticle {
    position: [f64; 3],
    id: u32,
    pad: u32,
}

/// `iters` round trips of `buf` between ranks 0 and 1 through ferrompi's blocking calls.
fn ping_pong<T: Equivalence>(world: &Communicator<'_>, iters: u64, buf: &mut [T]) -> Duration {
    let rank = world.rank();
    timed(iters, || match rank {
        0 => {
            world.send(buf, 1, 1).expect("send");
            world.recv(buf, 1, 1).expect("recv");
        }
        1 => {
            world.recv(buf, 0, 1).expect("recv");
            world.send(buf, 0, 1).expect("send");
        }
        _ => {}
    })
}

/// How many particles one message of the struct rows holds.
const PARTICLES: usize = 1_000_000;

/// Ping-pongs of 10^6 particles: as a derived struct (MPI gathers the fields, skipping the
/// padding), against C's hand-made struct datatype; and as `Bytes<T>`, against C's `MPI_BYTE`.
fn structs<'a>(bench: &mut MpiBench<'a>, rows: &mut Vec<Row>, world: &'a Communicator<'a>) {
    let one = Particle {
        position: [1.0, 2.0, 3.0],
        id: 7,
    };
    // SAFETY: makes and commits a datatype (kept until finalize), as the C program would.
    let datatype = unsafe { ferrompi_c_particle_type() };
    let what = "ping-pong of 10^6 derived structs (fields only)";
    // SAFETY: the C struct datatype describes one `Particle` (same fields, offsets and size).
    unsafe { typed_ping_pong(bench, rows, world, ("structs", what), one, (datatype, 1)) };
    let pod = PodParticle {
        position: [1.0, 2.0, 3.0],
        id: 7,
        pad: 0,
    };
    let what = "ping-pong of 10^6 structs as Bytes<T> (padding included)";
    let (group, bytes) = ("structs_bytes", std::mem::size_of::<PodParticle>());
    let byte = Raw::of(world).byte;
    // SAFETY: one `PodParticle` is `bytes` MPI_BYTEs.
    unsafe {
        typed_ping_pong(
            bench,
            rows,
            world,
            (group, what),
            ferrompi::Bytes(pod),
            (byte, bytes),
        )
    };
}

/// One row of [`structs`]: PARTICLES values of `T` ping-ponged by ferrompi, and by C with
/// `per_value` elements of `datatype` for each value.
///
/// # Safety
/// `per_value` elements of `datatype` describe one `T`, within its bytes.
unsafe fn typed_ping_pong<'a, T: Equivalence>(
    bench: &mut MpiBench<'a>,
    rows: &mut Vec<Row>,
    world: &'a Communicator<'a>,
    (group, what): (&'static str, &'static str),
    value: T,
    (datatype, per_value): (ffi::MPI_Datatype, usize),
) {
    let bytes = PARTICLES * std::mem::size_of::<T>();
    let buf = shared(value, PARTICLES);
    let ours = buf.clone();
    bench.add(group, "ferrompi", bytes, move |iters| {
        ping_pong(world, iters, &mut ours.borrow_mut()[..])
    });
    bench.add(group, "c", bytes, move |iters| {
        let mut buf = buf.borrow_mut();
        // SAFETY: `buf` holds PARTICLES values, each `per_value` elements of `datatype` (the
        // caller's promise).
        seconds(unsafe {
            ferrompi_c_pingpong_typed(
                iters as c_long,
                buf.as_mut_ptr().cast(),
                int(PARTICLES * per_value),
                datatype,
            )
        })
    });
    rows.push(Row {
        group,
        what,
        bytes,
        target: 1.02,
    });
}

fn collectives<'a>(bench: &mut MpiBench<'a>, rows: &mut Vec<Row>, world: &'a Communicator<'a>) {
    let size = world.size() as usize;
    bench.add("barrier", "ferrompi", 0, move |iters| {
        timed(iters, || world.barrier().expect("barrier"))
    });
    let raw = Raw::of(world);
    control(bench, "barrier", 0, move |iters| {
        // SAFETY: a valid communicator.
        timed(iters, || unsafe {
            ffi::MPI_Barrier(raw.comm);
        })
    });
    bench.add("barrier", "c", 0, move |iters| {
        // SAFETY: no arguments.
        seconds(unsafe { ferrompi_c_barrier(iters as c_long) })
    });
    rows.push(Row {
        group: "barrier",
        what: "barrier",
        bytes: 0,
        target: 1.02,
    });
    for bytes in COLLECTIVE {
        let buf = shared(1u8, bytes);
        let ours = buf.clone();
        bench.add("bcast", "ferrompi", bytes, move |iters| {
            let buf = &mut ours.borrow_mut()[..];
            timed(iters, || world.bcast(buf, 0).expect("bcast"))
        });
        let theirs = buf.clone();
        control(bench, "bcast", bytes, move |iters| {
            let mut buf = theirs.borrow_mut();
            let (at, count) = (buf.as_mut_ptr().cast(), int(bytes));
            // SAFETY: `buf` holds `bytes` bytes, borrowed for the block.
            timed(iters, || unsafe {
                ffi::MPI_Bcast(at, count, raw.byte, 0, raw.comm);
            })
        });
        bench.add("bcast", "c", bytes, move |iters| {
            let mut buf = buf.borrow_mut();
            // SAFETY: `buf` holds `bytes` bytes.
            seconds(unsafe { ferrompi_c_bcast(iters as c_long, buf.as_mut_ptr(), int(bytes)) })
        });
        rows.push(Row {
            group: "bcast",
            what: "bcast",
            bytes,
            target: 1.02,
        });
    }
    for bytes in COLLECTIVE {
        let n = bytes / 8;
        // The blocking and nonblocking rows, both sides, on one pair of buffers.
        let (send, recv) = (shared(1.0f64, n), shared(0.0f64, n));
        let (ours_send, ours_recv) = (send.clone(), recv.clone());
        bench.add("allreduce", "ferrompi", bytes, move |iters| {
            let (send, recv) = (&ours_send.borrow()[..], &mut ours_recv.borrow_mut()[..]);
            timed(iters, || {
                world.allreduce(send, recv, Sum).expect("allreduce")
            })
        });
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        control(bench, "allreduce", bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            let (from, to, count) = (send.as_ptr().cast(), recv.as_mut_ptr().cast(), int(n));
            // SAFETY: both buffers hold `n` doubles, borrowed for the block.
            timed(iters, || unsafe {
                ffi::MPI_Allreduce(from, to, count, raw.double, raw.sum, raw.comm);
            })
        });
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        bench.add("allreduce", "c", bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            // SAFETY: both buffers hold `n` doubles.
            seconds(unsafe {
                ferrompi_c_allreduce(iters as c_long, send.as_ptr(), recv.as_mut_ptr(), int(n))
            })
        });
        let (ours_send, ours_recv) = (send.clone(), recv.clone());
        bench.add("iallreduce", "ferrompi", bytes, move |iters| {
            let (send, recv) = (&ours_send.borrow()[..], &mut ours_recv.borrow_mut()[..]);
            timed(iters, || {
                scope(|s| world.iallreduce(s, send, &mut *recv, Sum)?.wait()).expect("iallreduce");
            })
        });
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        control(bench, "iallreduce", bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            let (from, to, count) = (send.as_ptr().cast(), recv.as_mut_ptr().cast(), int(n));
            let mut request = null_requests(1)[0];
            // SAFETY: both buffers hold `n` doubles, borrowed for the block; each request is
            // complete before the next starts.
            timed(iters, || unsafe {
                ffi::MPI_Iallreduce(from, to, count, raw.double, raw.sum, raw.comm, &mut request);
                ffi::MPI_Wait(&mut request, raw.status_ignore);
            })
        });
        bench.add("iallreduce", "c", bytes, move |iters| {
            let (send, mut recv) = (send.borrow(), recv.borrow_mut());
            // SAFETY: both buffers hold `n` doubles.
            seconds(unsafe {
                ferrompi_c_iallreduce(iters as c_long, send.as_ptr(), recv.as_mut_ptr(), int(n))
            })
        });
        // The persistent rows: C's request runs on the buffers ferrompi's owns.
        let persistent = world
            .allreduce_init(vec![1.0f64; n], vec![0.0f64; n], Sum)
            .expect("allreduce_init");
        let persistent = Rc::new(RefCell::new(persistent));
        let ours = persistent.clone();
        bench.add("allreduce_init", "ferrompi", bytes, move |iters| {
            let mut persistent = ours.borrow_mut();
            timed(iters, || {
                persistent
                    .start()
                    .and_then(|a| a.wait())
                    .expect("start/wait");
            })
        });
        let (send, recv) = {
            let mut inactive = persistent.borrow_mut();
            let (send, recv) = inactive.send_recv_mut();
            (send.as_ptr(), recv.as_mut_ptr())
        };
        // SAFETY: `n` doubles each, owned by `persistent`, which the C request keeps alive;
        // the two requests are never active at once (the harness runs one block at a time).
        let c = Rc::new(unsafe { CPersistent::on(persistent, send, recv, n) });
        let theirs = Rc::clone(&c);
        control(bench, "allreduce_init", bytes, move |iters| {
            let request = theirs.request.cast::<ffi::MPI_Request>();
            // SAFETY: C's inactive persistent request (an `MPI_Request` it allocated), on
            // buffers `theirs` keeps alive; each start is complete before the next.
            timed(iters, || unsafe {
                ffi::MPI_Start(request);
                ffi::MPI_Wait(request, raw.status_ignore);
            })
        });
        bench.add("allreduce_init", "c", bytes, move |iters| {
            let c = &c; // own all of `c` (request and buffers' owner), not just the pointer
            // SAFETY: an inactive persistent request on buffers `c` keeps alive.
            seconds(unsafe { ferrompi_c_persistent(iters as c_long, c.request) })
        });
        for (group, what, target) in [
            ("allreduce", "allreduce (blocking)", 1.02),
            ("iallreduce", "iallreduce + wait", 1.05),
            ("allreduce_init", "persistent allreduce start + wait", 1.02),
        ] {
            rows.push(Row {
                group,
                what,
                bytes,
                target,
            });
        }
    }
    for bytes in SMALL {
        let n = bytes / 8;
        let blocks = Partition::<f64>::uniform(size, n).expect("partition");
        let (send, recv) = (shared(1.0f64, n), shared(0.0f64, n * size));
        let (ours_send, ours_recv) = (send.clone(), recv.clone());
        bench.add("allgatherv", "ferrompi", bytes, move |iters| {
            let (send, recv) = (&ours_send.borrow()[..], &mut ours_recv.borrow_mut()[..]);
            timed(iters, || {
                world.allgatherv(send, recv, &blocks).expect("allgatherv")
            })
        });
        let counts = Rc::new(vec![int(n); size]);
        let displs: Rc<Vec<c_int>> = Rc::new((0..size).map(|r| int(r * n)).collect());
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        let (theirs_counts, theirs_displs) = (Rc::clone(&counts), Rc::clone(&displs));
        control(bench, "allgatherv", bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            let (from, to) = (send.as_ptr().cast(), recv.as_mut_ptr().cast());
            let (counts, displs, count) = (theirs_counts.as_ptr(), theirs_displs.as_ptr(), int(n));
            // SAFETY: as the C reference: `recv` holds `size` blocks of `n` doubles, as
            // `counts`/`displs` say, all borrowed or owned for the block.
            timed(iters, || unsafe {
                let d = raw.double;
                ffi::MPI_Allgatherv(from, count, d, to, counts, displs, d, raw.comm);
            })
        });
        bench.add("allgatherv", "c", bytes, move |iters| {
            let (send, mut recv) = (send.borrow(), recv.borrow_mut());
            // SAFETY: `recv` holds `size` blocks of `n` doubles, as `counts`/`displs` say.
            seconds(unsafe {
                ferrompi_c_allgatherv(
                    iters as c_long,
                    send.as_ptr(),
                    int(n),
                    recv.as_mut_ptr(),
                    counts.as_ptr(),
                    displs.as_ptr(),
                )
            })
        });
        let (send, recv) = (shared(1.0f64, n * size), shared(0.0f64, n * size));
        let (ours_send, ours_recv) = (send.clone(), recv.clone());
        bench.add("alltoall", "ferrompi", bytes, move |iters| {
            let (send, recv) = (&ours_send.borrow()[..], &mut ours_recv.borrow_mut()[..]);
            timed(iters, || world.alltoall(send, recv).expect("alltoall"))
        });
        let (theirs_send, theirs_recv) = (send.clone(), recv.clone());
        control(bench, "alltoall", bytes, move |iters| {
            let (send, mut recv) = (theirs_send.borrow(), theirs_recv.borrow_mut());
            let (from, to, count) = (send.as_ptr().cast(), recv.as_mut_ptr().cast(), int(n));
            // SAFETY: both buffers hold `size` blocks of `n` doubles, borrowed for the block.
            timed(iters, || unsafe {
                ffi::MPI_Alltoall(from, count, raw.double, to, count, raw.double, raw.comm);
            })
        });
        bench.add("alltoall", "c", bytes, move |iters| {
            let (send, mut recv) = (send.borrow(), recv.borrow_mut());
            // SAFETY: both buffers hold `size` blocks of `n` doubles.
            seconds(unsafe {
                ferrompi_c_alltoall(iters as c_long, send.as_ptr(), recv.as_mut_ptr(), int(n))
            })
        });
        for (group, what) in [
            ("allgatherv", "allgatherv (bytes per rank)"),
            ("alltoall", "alltoall (bytes per pair)"),
        ] {
            rows.push(Row {
                group,
                what,
                bytes,
                target: 1.02,
            });
        }
    }
}

fn main() {
    let mpi = Mpi::init().expect("MPI init");
    let world = mpi.world();
    let world = &world;
    let node = world.split_shared(0).expect("split_shared");
    let node = &node;
    let dims = mpi.dims_create(world.size(), &[0, 0]).expect("dims_create");
    let grid = world
        .cart_create(&dims, &[false, false], false)
        .expect("cart_create");
    let grid = &grid.expect("every process");
    let faces = halo_rows::Faces::new(&mpi, grid);
    let ranks = world.size();
    let mut bench = MpiBench::new(world);
    let mut rows = Vec::new();
    if ranks == 2 {
        point_to_point(&mut bench, &mut rows, world);
        structs(&mut bench, &mut rows, world);
    }
    collectives(&mut bench, &mut rows, world);
    window_rows::windows(&mut bench, &mut rows, world, node);
    halo_rows::halo(&mut bench, &mut rows, &faces, grid);
    // FERROMPI_BENCH_ONLY=group,group keeps only those rows, and FERROMPI_BENCH_BYTES=8,4096
    // only those sizes (for profiling one operation).
    let list = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| v.split(',').map(String::from).collect::<Vec<_>>())
    };
    let (groups, sizes) = (list("FERROMPI_BENCH_ONLY"), list("FERROMPI_BENCH_BYTES"));
    let keep = |group: &str, bytes: usize| {
        groups.as_ref().is_none_or(|g| g.iter().any(|x| x == group))
            && sizes
                .as_ref()
                .is_none_or(|s| s.iter().any(|x| *x == bytes.to_string()))
    };
    // FERROMPI_BENCH_NULL=1: the A/A control (tools/bench-null.sh). Every row compares the C
    // side with itself, through the same quartets and estimator, so the ratios measure only
    // this machine's noise: how far from 1 a binding that added nothing would land.
    let null = std::env::var_os("FERROMPI_BENCH_NULL").is_some_and(|v| !v.is_empty());
    let side = if null { "c" } else { "ferrompi" };
    // The CSV has no quoting: a comma in a name would shift the report's fields.
    if let Some(row) = rows.iter().find(|r| r.what.contains(',')) {
        panic!("a comma in the row name {:?}", row.what);
    }
    rows.retain(|r| keep(r.group, r.bytes));
    bench.retain(|group, function, bytes| keep(group, bytes) && (!null || function == "c"));
    let Some(mut session) = bench.run(harness::criterion()) else {
        return;
    };
    let quick = std::env::args().any(|a| a == "--test");
    let rounds = if quick { 2 } else { 150 };
    // "Open MPI 4.1.4", "MPICH 5.0.2": the version keeps apart tables of one family's versions
    // run side by side (tools/bench-run.sh), which the report keys by this name.
    let version = mpi.library_version().unwrap_or_default();
    let version = version
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|word| word.trim_start_matches('v'))
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('.'))
        .unwrap_or("");
    let implementation = format!("{} {version}", ferrompi::IMPLEMENTATION);
    let implementation = implementation.trim_end();
    // How the launcher placed the ranks (tools/bench.sh: "dedicated" when they fit the cores,
    // "oversubscribed" when they do not), said beside every table.
    let mut mode = std::env::var("FERROMPI_BENCH_MODE").unwrap_or_else(|_| "unstated".into());
    if null {
        mode += " A/A";
    }
    let heading = if null {
        ": the A/A control, the ferrompi columns are C again"
    } else {
        ""
    };
    let mut md = format!(
        "### {implementation}, {ranks} ranks ({mode}){heading}\n\n\
         | operation | bytes | ferrompi µs | C µs | ferrompi / C | ferrompi − C, ns | target | allocations | | \
         Rust ffi / C | ferrompi / Rust ffi | ferrompi − Rust ffi, ns |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"
    );
    let mut csv = String::from(
        "implementation,ranks,group,operation,bytes,ferrompi_us,c_us,ratio,target,allocations,mode,difference_ns,\
         ffi_ratio,own_ratio,own_difference_ns\n",
    );
    for row in &rows {
        let theirs = session.summary().get(row.group, "c", row.bytes) * 1e6;
        let mine = session.summary().get(row.group, side, row.bytes) * 1e6;
        let allocations = session.summary().allocations(row.group, side, row.bytes);
        let paired = session.compare((row.group, side), (row.group, "c"), row.bytes, rounds);
        let (ratio, difference) = (paired.ratio, paired.difference * 1e9);
        // Where the row has the ffi control: Rust ffi against C, and ferrompi against Rust ffi.
        let control = session.has(row.group, FFI, row.bytes).then(|| {
            let ffi = session.compare((row.group, FFI), (row.group, "c"), row.bytes, rounds);
            let own = session.compare((row.group, "ferrompi"), (row.group, FFI), row.bytes, rounds);
            (ffi.ratio, own.ratio, own.difference * 1e9)
        });
        let (cells, control_csv) = match control {
            Some((ffi, own, own_ns)) => (
                format!(" {ffi:.3} | {own:.3} | {own_ns:+.1} |"),
                format!("{ffi:.4},{own:.4},{own_ns:.2}"),
            ),
            None => (" | | |".to_string(), ",,".to_string()),
        };
        let verdict = if ratio <= row.target && allocations == 0 {
            "ok"
        } else {
            "**over**"
        };
        md += &format!(
            "| {} | {} | {mine:.2} | {theirs:.2} | {ratio:.3} | {difference:+.0} | {:.2} | {allocations} | {verdict} |{cells}\n",
            row.what, row.bytes, row.target
        );
        csv += &format!(
            "{implementation},{ranks},{},{},{},{mine:.4},{theirs:.4},{ratio:.4},{},{allocations},{mode},{difference:.1},{control_csv}\n",
            row.group, row.what, row.bytes, row.target
        );
    }
    if rows.iter().any(|r| r.group == "allreduce_init") {
        md += &library_effect(&mut session, rounds);
    }
    md += &halo_rows::persistent_effect(&mut session, rounds);
    drop(session);
    harness::report(&md, &csv);
}

/// What persistent collectives buy on this MPI, measured in C (so the binding plays no part).
fn library_effect(session: &mut Session<'_>, rounds: usize) -> String {
    let mut md = String::from(
        "\nPersistent allreduce in C against the other two forms (median of interleaved quartets; \
         below 1 means persistent is faster):\n\n\
         | bytes | persistent / blocking | persistent / iallreduce + wait |\n|---:|---:|---:|\n",
    );
    for bytes in COLLECTIVE {
        if !["allreduce_init", "allreduce", "iallreduce"]
            .iter()
            .all(|g| session.has(g, "c", bytes))
        {
            continue;
        }
        let p = ("allreduce_init", "c");
        let blocking = session.ratio(p, ("allreduce", "c"), bytes, rounds);
        let nonblocking = session.ratio(p, ("iallreduce", "c"), bytes, rounds);
        md += &format!("| {bytes} | {blocking:.3} | {nonblocking:.3} |\n");
    }
    md
}
