//! What the adversarial review broke with safe code (issue "Soundness: …"), one check each. Run
//! at every thread level: a user op's input is never written and its buffers never overrun;
//! MPI calls from inside a user op are refused (at `Serialized` they deadlocked); a persistent
//! or owned request that a refused thread cannot complete never hands out its buffer, and a
//! window dropped there never frees its vector; `Debug` never reads a buffer in flight; bad
//! partitions and wrapping lengths are errors; a collective's status is the empty one; Open
//! MPI's single-copy path cannot write past a short receive buffer; checked collectives turn
//! mismatched lengths into errors on every rank.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::window::{Assert, Window};
use ferrompi::{
    Communicator, Error, ErrorClass, Loc, LockType, Mpi, Partition, Status, Sum, ThreadLevel,
    UserOp,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A send buffer in read-only memory: writing it (as the trampoline used to, "repairing" the
/// input side) is a segmentation fault.
static READ_ONLY: [bool; 64] = [true; 64];

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    user_op_input_is_read_only(mpi, &world, t);
    user_op_of_padded_values(mpi, &world, t);
    mpi_calls_inside_a_user_op_are_refused(mpi, &world, t);
    refused_threads_get_no_buffers(mpi, &world, t);
    refused_threads_leak_window_vectors(mpi, &world, t);
    debug_does_not_read_buffers(&world, t);
    bad_partitions_and_wrapping_lengths(&world, t);
    collective_status_is_empty(&world, t);
    long_message_into_short_buffer(&world, t);
    checked_collectives(mpi, &world, t);
}

/// Logical or of `bool`s (a type that needs repair) with the send buffer in `.rodata`.
fn user_op_input_is_read_only(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    let or = t.okay(
        UserOp::<bool>::commutative(mpi, |a, b| {
            b.iter_mut().zip(a).for_each(|(y, x)| *y = *y || *x)
        }),
        "bool op",
    );
    let mut out = [false; 64];
    t.okay(world.allreduce(&READ_ONLY, &mut out, &or), "allreduce");
    t.ok(out.iter().all(|&b| b), "allreduce of read-only input");
    let mut out = [false; 64];
    let done = ferrompi::scope(|s| world.iallreduce(s, &READ_ONLY, &mut out, &or)?.wait());
    t.okay(done, "iallreduce from read-only memory");
    t.ok(out.iter().all(|&b| b), "iallreduce of read-only input");
    let mut out = [false; 64];
    let root = world.size() - 1;
    let done = ferrompi::scope(|s| world.ireduce(s, &READ_ONLY, &mut out, &or, root)?.wait());
    t.okay(done, "ireduce from read-only memory");
    if world.rank() == root {
        t.ok(out.iter().all(|&b| b), "ireduce of read-only input");
    }
}

/// `Loc<f64>` is 16 bytes, but `MPI_DOUBLE_INT` covers 12: MPI's temporaries for `n` values are
/// `16 n - 4` bytes, so a closure handed `&mut [Loc<f64>]` over them wrote past a heap block
/// (valgrind run in CI). Also checks the results of a max-loc written as a user op.
fn user_op_of_padded_values(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    let max_loc = t.okay(
        UserOp::<Loc<f64>>::commutative(mpi, |a, b| {
            for (y, x) in b.iter_mut().zip(a) {
                if x.value > y.value || (x.value == y.value && x.index < y.index) {
                    *y = *x;
                }
            }
        }),
        "Loc op",
    );
    let (rank, size) = (world.rank(), world.size());
    for n in [1usize, 3, 1000] {
        let send: Vec<Loc<f64>> = (0..n)
            .map(|i| Loc {
                value: f64::from((rank + i32::try_from(i).unwrap()) % size),
                index: rank,
            })
            .collect();
        let mut out = vec![Loc::default(); n];
        t.okay(world.allreduce(&send, &mut out, &max_loc), "allreduce Loc");
        let mut nb = vec![Loc::default(); n];
        let done = ferrompi::scope(|s| world.iallreduce(s, &send, &mut nb, &max_loc)?.wait());
        t.okay(done, "iallreduce Loc");
        for (i, (got, got_nb)) in out.iter().zip(&nb).enumerate() {
            let i = i32::try_from(i).unwrap();
            // The largest value is size - 1, held first by the rank r with (r + i) % size max.
            let want = Loc {
                value: f64::from(size - 1),
                index: (size - 1 - i).rem_euclid(size),
            };
            t.eq(*got, want, format!("max-loc of {n} values at {i}"));
            t.eq(
                *got_nb,
                want,
                format!("nonblocking max-loc of {n} values at {i}"),
            );
        }
    }
    let mut request = t.okay(
        world.allreduce_init(
            vec![
                Loc {
                    value: 1.0,
                    index: rank
                };
                5
            ],
            vec![Loc::default(); 5],
            max_loc,
        ),
        "allreduce_init Loc",
    );
    for _ in 0..3 {
        t.okay(t_start_wait(&mut request), "persistent Loc");
        t.ok(
            request.recv().iter().all(|l| l.index == 0),
            "persistent max-loc picks rank 0",
        );
    }
}

fn t_start_wait<B: ferrompi::Buffers>(
    request: &mut ferrompi::PersistentRequest<'_, B>,
) -> ferrompi::Result<Status> {
    request.start()?.wait()
}

/// Calls through ferrompi from inside a reduction: `Status::count` and `check` reach MPI
/// (`MPI_Get_count`, `MPI_Error_string`); at `Serialized` they took the lock the collective's
/// caller holds and deadlocked. They must be refused, whatever the level.
fn mpi_calls_inside_a_user_op_are_refused(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    let status = t.okay(
        world.sendrecv(&[1u8; 3], world.rank(), 7, &mut [0u8; 3], world.rank(), 7),
        "sendrecv to self",
    );
    t.eq_ok(status.count::<u8>(), 3, "status count outside a callback");
    let refused = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = refused.clone();
    let op = t.okay(
        UserOp::<i64>::commutative(mpi, move |a, b| {
            if matches!(
                status.count::<u8>().as_ref().map_err(ferrompi::Error::kind),
                Err(ErrorKind::InCallback { .. })
            ) {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let looked_up = ferrompi::check(ErrorClass::Truncate.raw(), "inside");
            let described = looked_up
                .clone()
                .is_err_and(|e| e.to_string().contains("user-defined"));
            assert!(
                described,
                "an error lookup inside a user op must not call MPI: {looked_up:?}"
            );
            b.iter_mut().zip(a).for_each(|(y, x)| *y += x);
        }),
        "op calling MPI",
    );
    let mut out = [0i64; 4];
    t.okay(world.allreduce(&[1; 4], &mut out, &op), "allreduce");
    t.eq(
        out,
        [i64::from(world.size()); 4],
        "sum despite refused calls",
    );
    let calls = refused.load(std::sync::atomic::Ordering::Relaxed);
    let mut most = [0u64];
    let calls = [u64::try_from(calls).unwrap()];
    t.okay(
        world.allreduce(&calls, &mut most, ferrompi::Max),
        "most refused calls",
    );
    // One rank alone: MPI need not call the op at all; with more, some rank calls it.
    t.ok(
        world.size() == 1 || most[0] > 0,
        "the op was called and its MPI call refused",
    );
}

/// A persistent request whose `Active` was leaked, and an owned request, moved to a thread the
/// level does not allow: no buffer comes out while the operation may be in flight. Where the
/// thread is allowed, it completes the operation and gets the data.
fn refused_threads_get_no_buffers(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    let rank = world.rank();
    let restricted = mpi.thread_level() < ThreadLevel::Serialized;
    mpi.set_abort_on_panic(false);

    let mut persistent = t.okay(world.recv_init(vec![false; 8], rank, 31), "recv_init");
    std::mem::forget(t.okay(persistent.start(), "start"));
    if restricted {
        let read = std::thread::scope(|s| {
            let reader =
                s.spawn(|| catch_unwind(AssertUnwindSafe(|| persistent.buffer().to_vec())));
            reader.join().expect("joined")
        });
        t.ok(
            read.is_err(),
            "a refused thread panics instead of reading a live buffer",
        );
        t.okay(world.send(&[true; 8], rank, 31), "send to self");
        t.eq(
            persistent.buffer(),
            &[true; 8][..],
            "completed on the initialising thread",
        );
    } else {
        // Send first: at `Serialized` a blocked wait holds the lock the send needs.
        t.okay(world.send(&[true; 8], rank, 31), "send to self");
        let read = std::thread::scope(|s| s.spawn(|| persistent.buffer().to_vec()).join());
        t.eq(
            read.expect("joined"),
            vec![true; 8],
            "completed on another thread",
        );
    }

    let owned = t.okay(world.irecv_owned(vec![false; 4], rank, 32), "irecv_owned");
    if !restricted {
        t.okay(world.send(&[true; 4], rank, 32), "send to self");
    }
    let outcome = std::thread::scope(|s| {
        let waiter = s.spawn(move || catch_unwind(AssertUnwindSafe(|| owned.wait())));
        waiter.join().expect("joined")
    });
    match outcome {
        Ok((buffer, status)) => {
            t.ok(!restricted, "an allowed thread completes an owned request");
            t.okay(status, "owned wait");
            t.eq(buffer, vec![true; 4], "owned data");
        }
        Err(panic) => {
            let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
            t.ok(restricted, "only a refused thread panics");
            t.ok(
                message.contains("cannot be completed here"),
                format!("a clear panic: {message}"),
            );
            // The request leaked with its buffer, still posted: satisfy it.
            t.okay(world.send(&[true; 4], rank, 32), "send to self");
        }
    }
    mpi.set_abort_on_panic(true);
}

/// A window over a vector it owns, dropped on a thread the level does not allow: MPI cannot
/// free the window there, so the vector must be leaked, not freed. Rank 1 then puts into rank
/// 0's window, which MPI still holds: the bytes must land in the leaked vector, not in the
/// block rank 0 allocated next (which, had the vector been freed, is likely the same memory).
/// Every rank leaks its window the same way; finalize then warns and frees it on the
/// initialising thread (MPICH's UCX layer aborts at finalize over a window still registered).
/// Where the thread is allowed, the drops free the windows as usual.
fn refused_threads_leak_window_vectors(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    const LEN: usize = 4096;
    let restricted = mpi.thread_level() < ThreadLevel::Serialized;
    let win = t.okay(Window::from_vec(world, vec![0u8; LEN]), "from_vec");
    let drop_elsewhere = |win: Window<'_, u8>| {
        std::thread::scope(|s| s.spawn(move || drop(win)).join()).expect("joined");
    };
    if !restricted {
        drop_elsewhere(win);
        t.okay(
            world.barrier(),
            "barrier after windows freed on other threads",
        );
        return;
    }
    match (world.rank(), world.size()) {
        (0, size) if size > 1 => {
            drop_elsewhere(win);
            let reused = vec![0x55u8; LEN];
            // Rank 1's put reaches rank 0's window while rank 0's MPI progresses here.
            t.okay(world.barrier(), "barrier while rank 1 puts");
            t.ok(
                reused.iter().all(|&b| b == 0x55),
                "a put into a window dropped on a refused thread does not land in freed memory",
            );
        }
        (1, _) => {
            let bytes = [0xAAu8; LEN];
            t.okay(
                win.lock(LockType::Exclusive, 0, Assert::empty(), |e| {
                    e.put(&bytes, 0, 0)
                }),
                "put into rank 0's leaked window",
            )
            .unwrap();
            t.okay(world.barrier(), "barrier after the put");
            drop_elsewhere(win);
        }
        _ => {
            drop_elsewhere(win);
            t.okay(world.barrier(), "barrier");
        }
    }
    // The window every rank leaked above stays counted: finalize warns about it and frees it,
    // collectively (rank 0's leaked vector stays allocated under it).
}

/// `Debug` of a pending owned receive, from another thread than the one MPI writes on: it must
/// not print (read) the buffer.
fn debug_does_not_read_buffers(world: &Communicator<'_>, t: &mut Checks) {
    let rank = world.rank();
    let pending = t.okay(world.irecv_owned(vec![true; 3], rank, 33), "irecv_owned");
    let text = format!("{pending:?}");
    t.ok(
        !text.contains("true"),
        format!("Debug shows no buffer: {text}"),
    );
    t.okay(world.send(&[false; 3], rank, 33), "send to self");
    let (buffer, status) = pending.wait();
    t.okay(status, "wait");
    t.eq(buffer, vec![false; 3], "received");
}

fn bad_partitions_and_wrapping_lengths(world: &Communicator<'_>, t: &mut Checks) {
    let empty = t.okay(Partition::<f64>::from_counts(&[]), "empty partition");
    let invalid = |e: &Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    let (mut recv, send) = (vec![0.0; 1], vec![0.0; 1]);
    t.err(
        world.reduce_scatter(&send, &mut recv, &empty, Sum),
        invalid,
        "reduce_scatter",
    );
    t.err(
        world.reduce_scatter_in_place(&mut recv, &empty, Sum),
        invalid,
        "reduce_scatter in place",
    );
    t.err(
        world.reduce_scatter_init(vec![0.0f64; 1], vec![0.0; 1], &empty, Sum),
        invalid,
        "reduce_scatter_init",
    );
    t.err(
        world.reduce_scatter_init_in_place(vec![0.0f64; 1], &empty, Sum),
        invalid,
        "reduce_scatter_init in place",
    );
    let started = ferrompi::scope(|s| {
        world
            .ireduce_scatter(s, &send, &mut recv, &empty, Sum)
            .map(drop)
    });
    t.err(started, invalid, "ireduce_scatter");

    // Zero-sized values need no memory, so lengths near usize::MAX exist; `len * size` wraps.
    let size = usize::try_from(world.size()).unwrap();
    if size >= 2 {
        let per_rank = usize::MAX / size + 1;
        let wrapped = per_rank.wrapping_mul(size);
        let recv = zero_sized(per_rank);
        let send = zero_sized(wrapped);
        let wrong_size = |e: &Error| matches!(e.kind(), ErrorKind::BufferSize { .. });
        t.err(
            world.reduce_scatter_block(send, recv, Sum),
            wrong_size,
            "reduce_scatter_block with a wrapping length",
        );
        let started =
            ferrompi::scope(|s| world.ireduce_scatter_block(s, send, recv, Sum).map(drop));
        t.err(
            started,
            wrong_size,
            "ireduce_scatter_block with a wrapping length",
        );
    }
}

/// `len` zero-sized values.
fn zero_sized(len: usize) -> &'static mut [[f64; 0]] {
    // SAFETY: a slice of zero-sized values needs no memory: any aligned, non-null pointer is
    // valid for any length.
    unsafe { std::slice::from_raw_parts_mut(std::ptr::NonNull::dangling().as_ptr(), len) }
}

fn collective_status_is_empty(world: &Communicator<'_>, t: &mut Checks) {
    let mut out = [0u32; 2];
    let status = ferrompi::scope(|s| world.iallreduce(s, &[1, 2], &mut out, Sum)?.wait());
    let status = t.okay(status, "iallreduce");
    t.ok(
        status.is_empty(),
        format!("a collective's status is empty: {status:?}"),
    );
    t.ok(
        status.source() != 0 && status.tag() != 0,
        "not a message from rank 0, tag 0",
    );
    t.ok(Status::empty().is_empty(), "Status::empty");
}

/// A long message into a short buffer between two ranks of this node: Open MPI's single-copy
/// path wrote past the buffer (heap corruption); ferrompi turns it off, so the receive reports
/// truncation and the bytes after the buffer are untouched.
fn long_message_into_short_buffer(world: &Communicator<'_>, t: &mut Checks) {
    const LONG: usize = 1 << 20;
    const SHORT: usize = 1 << 16;
    match world.rank() {
        0 if world.size() > 1 => t.okay(world.send(&vec![7u8; LONG], 1, 34), "long send"),
        1 => {
            let mut memory = vec![0u8; SHORT + 4096];
            let (buffer, after) = memory.split_at_mut(SHORT);
            t.truncated(
                world.recv(buffer, 0, 34),
                false,
                "long message, short buffer",
            );
            t.ok(
                after.iter().all(|&b| b == 0),
                "nothing written past the buffer",
            );
        }
        _ => {}
    }
}

/// Lengths that differ across ranks, with checked collectives on: every rank gets the error
/// and nothing starts (unchecked, Open MPI crashed and MPICH hung).
fn checked_collectives(mpi: &Mpi, world: &Communicator<'_>, t: &mut Checks) {
    mpi.set_collective_checks(true);
    let (rank, size) = (world.rank(), world.size());
    let mismatch = |e: &Error| matches!(e.kind(), ErrorKind::CollectiveMismatch { .. });
    // Matching arguments pass.
    let mut out = [0i32; 3];
    let status = ferrompi::scope(|s| world.iallreduce(s, &[1; 3], &mut out, Sum)?.wait());
    t.okay(status, "checked iallreduce");
    t.eq(out, [size; 3], "checked iallreduce result");
    let mut request = t.okay(
        world.allreduce_init(vec![1i32; 2], vec![0; 2], Sum),
        "checked init",
    );
    t.okay(t_start_wait(&mut request), "checked persistent");
    t.eq(request.recv(), &[size; 2][..], "checked persistent result");
    if size > 1 {
        let len = if rank == 0 { 2 } else { 3 };
        let (send, mut out) = (vec![1i32; len], vec![0i32; len]);
        let started = ferrompi::scope(|s| world.iallreduce(s, &send, &mut out, Sum).map(drop));
        t.err(started, mismatch, "iallreduce of different lengths");
        let mut buf = vec![0u8; 4];
        let started = ferrompi::scope(|s| world.ibcast(s, &mut buf, rank % 2).map(drop));
        t.err(started, mismatch, "ibcast with different roots");
        t.err(
            world.allreduce_init(vec![1i32; len], vec![0; len], Sum),
            mismatch,
            "allreduce_init of different lengths",
        );
        // alltoallv: rank 0 sends one value more to rank 1 than rank 1 expects.
        let sizes = usize::try_from(size).unwrap();
        let mut counts = vec![1usize; sizes];
        if rank == 0 {
            counts[1] = 2;
        }
        let send_blocks = t.okay(Partition::<u8>::from_counts(&counts), "send blocks");
        let recv_blocks = t.okay(Partition::<u8>::uniform(sizes, 1), "recv blocks");
        let send = vec![1u8; send_blocks.extent()];
        let mut recv = vec![0u8; recv_blocks.extent()];
        let started = ferrompi::scope(|s| {
            world
                .ialltoallv(s, &send, &send_blocks, &mut recv, &recv_blocks)
                .map(drop)
        });
        t.err(started, mismatch, "ialltoallv whose pairs disagree");
    }
    mpi.set_collective_checks(false);
}
