//! RMA windows: every operation under fence, post/start/complete/wait, lock and lock_all;
//! request-based calls; windows MPI allocates, that own a vector, or borrow a buffer; and bad
//! targets, displacements, counts and epochs, each an error with the job going on.

use super::shared_window::sum_over;
use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::window::{Assert, Window};
use ferrompi::{Communicator, LockType, Max, Mpi, NoOp, Replace, Sum, scope};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    fence(&world, t);
    pscw(&world, t);
    leaked_exposure(&world, t);
    passive(&world, t);
    requests(&world, t);
    storage(&world, t);
    bad_input(&world, t);
    targets(&world, t);
    target_atomics(&world, t);
}

/// The next and previous rank around a ring of `comm`.
pub fn ring(comm: &Communicator<'_>) -> (i32, i32) {
    let (rank, size) = (comm.rank(), comm.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

fn fence(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    let rank = comm.rank();
    let size = comm.size();
    let win = t.okay(Window::<f64>::allocate(comm, 8), "allocate");
    t.eq(win.local_len(), 8, "local length");
    t.eq(win.len_of(size), None, "length of a rank past the end");
    // put to the next rank, get it back from myself.
    let mine = [f64::from(rank) + 0.5; 3];
    t.okay(
        win.fence(Assert::empty(), |e| e.put(&mine, next, 2)),
        "fence put",
    )
    .unwrap();
    let mut got = [0.0f64; 8];
    t.okay(
        win.fence(Assert::empty(), |e| e.get(&mut got, rank, 0)),
        "fence get",
    )
    .unwrap();
    let p = f64::from(prev) + 0.5;
    t.eq(got, [0.0, 0.0, p, p, p, 0.0, 0.0, 0.0], "put then get");
    // accumulate from everyone into rank 0, then get_accumulate with NoOp and Max.
    let ones = [1.0f64; 8];
    t.okay(
        win.fence(Assert::empty(), |e| e.accumulate(&ones, 0, 0, Sum)),
        "accumulate",
    )
    .unwrap();
    let (origin, mut before) = ([f64::from(rank) * 100.0; 8], [0.0f64; 8]);
    t.okay(
        win.fence(Assert::empty(), |e| {
            e.get_accumulate(&origin, &mut before, 0, 0, NoOp)
        }),
        "get_accumulate NoOp",
    )
    .unwrap();
    let base0 = f64::from(size - 1) + 0.5; // rank 0's slots 2..5 came from the last rank
    let mut want = [f64::from(size); 8];
    for x in &mut want[2..5] {
        *x += base0;
    }
    t.eq(before, want, "accumulated values");
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| {
            e.get_accumulate(&origin, &mut before, 0, 0, Max)
        }),
        "get_accumulate Max",
    )
    .unwrap();
    let mut after = [0.0f64; 8];
    t.okay(
        win.lock(LockType::Shared, 0, Assert::empty(), |e| {
            e.get(&mut after, 0, 0)
        }),
        "get after Max",
    )
    .unwrap();
    let top = f64::from(size - 1) * 100.0;
    t.ok(after.iter().all(|&x| x >= top), "Max applied");
}

fn pscw(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    let world_group = t.okay(comm.group(), "group");
    let to = t.okay(world_group.incl(&[next]), "group of next");
    let from = t.okay(world_group.incl(&[prev]), "group of prev");
    let win = t.okay(Window::<i32>::allocate(comm, 4), "allocate");
    let mine = [comm.rank() * 10, comm.rank() * 10 + 1];
    let exposure = t.okay(win.expose(&from, Assert::empty()), "post");
    t.okay(
        win.access(&to, Assert::empty(), |e| {
            e.put(&mine, next, 1)?;
            e.accumulate(&mine[..1], next, 3, Replace)
        }),
        "start/complete",
    )
    .unwrap();
    t.okay(exposure.wait(), "wait");
    let v = t.okay(win.into_vec(), "into_vec");
    t.eq(
        v,
        vec![0, prev * 10, prev * 10 + 1, prev * 10],
        "values from prev",
    );
}

/// An exposure epoch whose `Exposure` was leaked ends when the window is freed, as dropping
/// the `Exposure` would have ended it: the owned vector comes back with what the origin put,
/// and a window dropped with its exposure leaked is freed with the job going on.
fn leaked_exposure(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    let world_group = t.okay(comm.group(), "group");
    let to = t.okay(world_group.incl(&[next]), "group of next");
    let from = t.okay(world_group.incl(&[prev]), "group of prev");
    let mine = [comm.rank() + 1];
    let win = t.okay(Window::from_vec(comm, vec![0i32; 4]), "from_vec");
    std::mem::forget(t.okay(win.expose(&from, Assert::empty()), "post"));
    t.okay(
        win.access(&to, Assert::empty(), |e| e.put(&mine, next, 2)),
        "start/complete",
    )
    .unwrap();
    t.eq_ok(
        win.into_vec(),
        vec![0, 0, prev + 1, 0],
        "into_vec after a leaked exposure",
    );
    let win = t.okay(Window::<i32>::allocate(comm, 4), "allocate");
    std::mem::forget(t.okay(win.expose(&from, Assert::empty()), "post"));
    t.okay(
        win.access(&to, Assert::empty(), |e| e.put(&mine, next, 0)),
        "start/complete",
    )
    .unwrap();
    drop(win);
    t.okay(
        comm.barrier(),
        "barrier after a window dropped with its exposure leaked",
    );
}

fn passive(comm: &Communicator<'_>, t: &mut Checks) {
    let size = comm.size();
    let win = t.okay(Window::<i64>::allocate(comm, 2), "allocate");
    // Tickets: an atomic counter on rank 0.
    let ticket = t
        .okay(
            win.lock(LockType::Exclusive, 0, Assert::empty(), |e| {
                e.fetch_and_op(1, 0, 0, Sum)
            }),
            "lock",
        )
        .unwrap();
    let mut tickets = vec![0i64; size as usize];
    t.okay(comm.allgather(&[ticket], &mut tickets), "allgather");
    tickets.sort_unstable();
    t.eq(
        tickets,
        (0..i64::from(size)).collect::<Vec<_>>(),
        "unique tickets",
    );
    // compare_and_swap: one winner.
    let old = t
        .okay(
            win.lock_all(Assert::empty(), |e| {
                e.compare_and_swap(i64::from(comm.rank()) + 1, 0, 0, 1)
            }),
            "lock_all",
        )
        .unwrap();
    t.eq_ok(
        sum_over(comm, i32::from(old == 0)),
        1,
        "one compare_and_swap wins",
    );
    // Puts with flush, then everyone reads everyone.
    let mine = [i64::from(comm.rank()) * 7];
    t.okay(
        win.lock_all(Assert::empty(), |e| {
            e.put(&mine, comm.rank(), 1)?;
            e.flush(comm.rank())?;
            e.flush_all()?;
            e.flush_local_all()?;
            e.sync()
        }),
        "lock_all put",
    )
    .unwrap();
    t.okay(comm.barrier(), "barrier");
    let mut all = vec![[0i64; 1]; size as usize];
    t.okay(
        win.lock_all(Assert::empty(), |e| -> ferrompi::Result<()> {
            for (r, slot) in all.iter_mut().enumerate() {
                e.get(slot, r as i32, 1)?;
            }
            Ok(())
        }),
        "lock_all gets",
    )
    .unwrap();
    let want: Vec<[i64; 1]> = (0..size).map(|r| [i64::from(r) * 7]).collect();
    t.eq(all, want, "everyone's puts");
    // put_now and get_now: one buffer reused across calls in one epoch.
    let (next, _) = ring(comm);
    let mut one = [0i64];
    let seen = t
        .okay(
            win.lock_all(Assert::empty(), |e| -> ferrompi::Result<i64> {
                let mut total = 0;
                for k in 1..=3 {
                    one[0] = k;
                    e.put_now(&one, comm.rank(), 0)?;
                    e.get_now(&mut one, comm.rank(), 0)?;
                    total += one[0];
                }
                e.get_now(&mut one, next, 1)?;
                Ok(total + one[0])
            }),
            "lock_all put_now/get_now",
        )
        .unwrap();
    t.eq(seen, 6 + i64::from(next) * 7, "put_now then get_now");
    t.err(
        win.fence(Assert::NOSUCCEED, |e| e.put_now(&[1], 0, 0))
            .unwrap(),
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "put_now in a fence epoch",
    );
}

fn requests(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, _) = ring(comm);
    let win = t.okay(Window::<u32>::allocate(comm, 16), "allocate");
    let mine = [comm.rank() as u32 + 1; 16];
    t.okay(
        win.lock_all(Assert::empty(), |e| {
            scope(|s| -> ferrompi::Result<()> {
                let r = e.rput(s, &mine, next, 0)?;
                r.wait()?;
                e.flush(next)?;
                let a = e.raccumulate(s, &mine[..4], next, 0, Sum)?;
                a.wait()?;
                e.flush(next)
            })
        }),
        "rput, raccumulate",
    )
    .unwrap();
    t.okay(comm.barrier(), "barrier");
    let mut got = [0u32; 16];
    t.okay(
        win.lock_all(Assert::empty(), |e| {
            scope(|s| e.rget(s, &mut got, comm.rank(), 0)?.wait().map(drop))
        }),
        "rget",
    )
    .unwrap();
    let prev = (comm.rank() + comm.size() - 1) % comm.size();
    let p = prev as u32 + 1;
    let mut want = [p; 16];
    for x in &mut want[..4] {
        *x = 2 * p;
    }
    t.eq(got, want, "rput then raccumulate, read with rget");
    // Request-based calls need a passive epoch.
    t.err(
        win.fence(Assert::NOSUCCEED, |e| {
            scope(|s| e.rput(s, &mine, next, 0).map(drop))
        })
        .unwrap(),
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "rput in a fence epoch",
    );
}

fn storage(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    // Windows of a few bytes (MPICH 4.0.2 misplaces puts into windows whose size is not a
    // multiple of 16 bytes unless padded).
    for len in [1usize, 3, 5] {
        let win = t.okay(Window::<u8>::allocate(comm, len), "allocate a few bytes");
        let mine = [comm.rank() as u8 + 1];
        t.okay(
            win.fence(Assert::NOSUCCEED, |e| e.put(&mine, next, len - 1)),
            "fence put",
        )
        .unwrap();
        let mut want = vec![0u8; len];
        want[len - 1] = prev as u8 + 1;
        t.eq_ok(
            win.into_vec(),
            want,
            format!("{len}-byte window after a ring of puts"),
        );
    }
    // Windows over user memory of a few bytes, written whole (MPICH 4.0.2 misplaced these
    // puts: over a 4-byte vector or buffer the put never arrived).
    let mine = [comm.rank() as u8 + 1; 4];
    let win = t.okay(Window::from_vec(comm, vec![0u8; 4]), "from_vec of 4 bytes");
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.put(&mine, next, 0)),
        "fence put",
    )
    .unwrap();
    t.eq_ok(
        win.into_vec(),
        vec![prev as u8 + 1; 4],
        "4-byte vector after a ring of puts",
    );
    let mut four = [0u8; 4];
    let put = Window::with_buffer(comm, &mut four, |win| {
        win.fence(Assert::NOSUCCEED, |e| e.put(&mine, next, 0))
    });
    let inner = t.okay(put, "with_buffer of 4 bytes");
    t.okay(inner, "fence put").unwrap();
    t.eq(
        four,
        [prev as u8 + 1; 4],
        "4-byte buffer after a ring of puts",
    );
    // A vector the window owns, handed back.
    let data: Vec<u8> = vec![comm.rank() as u8; 5];
    let win = t.okay(Window::from_vec(comm, data), "from_vec");
    let mine = [200u8 + comm.rank() as u8];
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.put(&mine, next, 4)),
        "put",
    )
    .unwrap();
    let back = t.okay(win.into_vec(), "into_vec");
    let r = comm.rank() as u8;
    t.eq(
        back,
        vec![r, r, r, r, 200 + prev as u8],
        "owned vector back",
    );
    // A borrowed buffer, and zero-length windows on odd ranks.
    let mut buf = vec![1.5f32; if comm.rank() % 2 == 0 { 3 } else { 0 }];
    let target = 0;
    let result = Window::with_buffer(comm, &mut buf, |win| {
        let one = [1.0f32];
        win.lock(LockType::Exclusive, target, Assert::empty(), |e| {
            e.accumulate(&one, target, 0, Sum)
        })
    });
    let inner = t.okay(result, "with_buffer");
    t.okay(inner, "accumulate").unwrap();
    t.okay(comm.barrier(), "barrier");
    if comm.rank() == 0 {
        t.eq(
            buf[0],
            1.5 + comm.size() as f32,
            "borrowed buffer back, accumulated",
        );
    }
}

fn bad_input(comm: &Communicator<'_>, t: &mut Checks) {
    let size = comm.size();
    let win = t.okay(Window::<i32>::allocate(comm, 4), "allocate");
    let two = [1i32, 2];
    // NOSUCCEED ends the fence sequence, so the lock epochs below are allowed.
    let errs = t.okay(
        win.fence(Assert::NOSUCCEED, |e| {
            let flush = e.flush(0);
            let fetch = e.fetch_and_op(1, 0, 0, Sum);
            [
                e.put(&two, size, 0),
                e.put(&two, -1, 0),
                e.put(&two, 0, 3),
                e.put(&two, 0, usize::MAX),
                flush,
                fetch.map(drop),
            ]
        }),
        "fence",
    );
    let [bad_rank, negative, past_end, overflow, flush, fetch] = errs;
    t.err(
        bad_rank,
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "rank = size",
    );
    t.err(
        negative,
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "rank -1",
    );
    t.err(
        past_end,
        |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
        "past the end",
    );
    t.err(
        overflow,
        |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
        "index overflow",
    );
    t.err(
        flush,
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "flush in a fence",
    );
    t.err(
        fetch,
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "fetch_and_op in a fence",
    );
    // A lock on one target allows no other; epochs do not nest.
    let other = (comm.rank() + 1) % size;
    let r = t.okay(
        win.lock(LockType::Shared, comm.rank(), Assert::empty(), |e| {
            let wrong_target = if size > 1 {
                e.put(&two, other, 0)
            } else {
                Err(ErrorKind::EpochMisuse {
                    operation: "put",
                    reason: "one rank".into(),
                }
                .into())
            };
            let nested = win.lock_all(Assert::empty(), |_| ());
            (wrong_target, nested)
        }),
        "lock",
    );
    t.err(
        r.0,
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "put to an unlocked rank",
    );
    t.err(
        r.1,
        |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
        "nested epoch",
    );
    t.err(
        win.lock(LockType::Shared, size, Assert::empty(), |_| ()),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "lock on a bad rank",
    );
    // The calls that complete before returning check the same, in one test of the epoch.
    let me = comm.rank();
    let locked = t.okay(
        win.lock(LockType::Shared, me, Assert::empty(), |e| {
            let mut back = [0i32; 2];
            [
                e.put_now(&two, other, 0),
                e.get_now(&mut back, size, 0),
                e.flush(-1),
                e.put_now(&two, me, 3),
            ]
        }),
        "lock for put_now and get_now",
    );
    let [unlocked, beyond, negative, past] = locked;
    if size == 1 {
        t.okay(unlocked, "put_now to the locked rank (the only one)"); // `other` is this rank
    } else {
        t.err(
            unlocked,
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            "put_now to an unlocked rank",
        );
    }
    for (result, what) in [
        (beyond, "get_now from rank = size under a lock"),
        (negative, "flush of rank -1 under a lock"),
    ] {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            what,
        );
    }
    t.err(
        past,
        |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
        "put_now past the end",
    );
    let all = t.okay(
        win.lock_all(Assert::empty(), |e| {
            let mut back = [0i32; 2];
            [
                e.get_now(&mut back, size, 0),
                e.put_now(&two, -1, 0),
                e.flush(size),
            ]
        }),
        "lock_all for put_now and get_now",
    );
    for (result, what) in all.into_iter().zip(["get_now", "put_now", "flush"]) {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
            format!("{what} to a rank outside the window"),
        );
    }
    // Atomics on multi-element types are refused.
    let arrays = t.okay(Window::<[i32; 2]>::allocate(comm, 1), "allocate arrays");
    t.err(
        arrays
            .lock_all(Assert::empty(), |e| e.fetch_and_op([1, 1], 0, 0, Sum))
            .unwrap(),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "fetch_and_op of an array",
    );
    // The job goes on.
    t.okay(comm.barrier(), "barrier after errors");
}

/// `epoch.target(rank)`: the same calls to one process, its rank and the epoch's kind checked
/// once, in passive and active epochs; and what it refuses.
fn targets(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    let (rank, size) = (comm.rank(), comm.size());
    let win = t.okay(Window::<i64>::allocate(comm, 4), "allocate");
    // lock_all: put_now to the next rank's slots 0..2, read back with get_now; put + flush.
    let (mut one, pair) = ([0i64], [i64::from(rank) * 10, i64::from(rank) * 10 + 1]);
    let read = t.okay(
        win.lock_all(Assert::empty(), |e| -> ferrompi::Result<[i64; 2]> {
            let to = e.target(next)?;
            for k in 0..2 {
                one[0] = i64::from(rank) * 10 + k as i64;
                to.put_now(&one, k)?;
            }
            let mut back = [0i64; 2];
            to.get_now(&mut back, 0)?;
            to.put(&pair, 2)?;
            to.flush()?;
            Ok(back)
        }),
        "lock_all through target",
    );
    t.eq_ok(
        read,
        [i64::from(rank) * 10, i64::from(rank) * 10 + 1],
        "put_now then get_now through target",
    );
    t.okay(comm.barrier(), "barrier");
    // Fence: get this rank's window through a target (complete at the closing fence).
    let mut mine = [0i64; 4];
    t.okay(
        win.fence(Assert::empty(), |e| e.target(rank)?.get(&mut mine, 0)),
        "fence get through target",
    )
    .unwrap();
    let p = i64::from(prev) * 10;
    t.eq(mine, [p, p + 1, p, p + 1], "what prev put, through target");
    // Fence: puts through a target, then what only passive epochs allow is refused.
    let halo = [i64::from(rank); 2];
    let refused = t.okay(
        win.fence(Assert::empty(), |e| -> ferrompi::Result<_> {
            let to = e.target(next)?;
            to.put(&halo, 0)?;
            to.put(&halo[..0], 4)?; // empty, at the end: allowed
            let mut back = [0i64];
            Ok([to.put_now(&halo, 0), to.get_now(&mut back, 0), to.flush()])
        }),
        "fence put through target",
    );
    for (result, what) in refused
        .unwrap()
        .into_iter()
        .zip(["put_now", "get_now", "flush"])
    {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            format!("{what} through a target of a fence epoch"),
        );
    }
    let mut seen = [0i64; 2];
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.get(&mut seen, rank, 0)),
        "fence get",
    )
    .unwrap();
    t.eq(seen, [i64::from(prev); 2], "puts through a fence target");
    // Bounds: checked on every call; the rank and the lock when the target is made.
    let bounds = t.okay(
        win.lock_all(Assert::empty(), |e| -> ferrompi::Result<_> {
            let to = e.target(rank)?;
            let mut back = [0i64; 2];
            Ok([
                to.put_now(&halo, 3),
                to.get_now(&mut back, usize::MAX),
                to.put_now(&halo[..0], 5),
                to.put_now(&halo[..0], 4),
            ])
        }),
        "lock_all for bounds",
    );
    let [past, overflow, empty_past, empty_end] = bounds.unwrap();
    for (result, what) in [
        (past, "put_now past the end"),
        (overflow, "get_now at usize::MAX"),
        (empty_past, "an empty put_now past the end"),
    ] {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
            what,
        );
    }
    t.okay(empty_end, "an empty put_now at the end");
    let ranks = t.okay(
        win.lock_all(Assert::empty(), |e| {
            [e.target(size).map(drop), e.target(-1).map(drop)]
        }),
        "lock_all for bad ranks",
    );
    for (result, what) in ranks.into_iter().zip(["rank = size", "rank -1"]) {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
            format!("target of {what}"),
        );
    }
    let locked = t.okay(
        win.lock(LockType::Shared, rank, Assert::empty(), |e| {
            (e.target(rank).map(|to| to.rank()), e.target(next).map(drop))
        }),
        "lock for targets",
    );
    t.eq_ok(locked.0, rank, "target of the locked rank");
    if size > 1 {
        t.err(
            locked.1,
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            "target of another rank than the locked one",
        );
    }
    t.okay(comm.barrier(), "barrier after targets");
}

/// The rest of a target's calls: accumulate and get_accumulate in a fence epoch; the atomics,
/// flush_local and request-based calls under lock_all, each with real results; what an active
/// epoch refuses; bounds.
fn target_atomics(comm: &Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (comm.rank(), comm.size());
    let n = i64::from(size);
    let win = t.okay(Window::<i64>::allocate(comm, 4), "allocate");
    // Fence: everyone adds [1, 2] at rank 0's slots 0..2; each rank fetches its own slot 3
    // and replaces it with rank + 5; the passive-only calls are refused.
    let (ones, mine) = ([1i64, 2], [i64::from(rank) + 5]);
    let mut before = [-1i64];
    let refused = t.okay(
        win.fence(Assert::empty(), |e| -> ferrompi::Result<_> {
            e.target(0)?.accumulate(&ones, 0, Sum)?;
            let me = e.target(rank)?;
            me.get_accumulate(&mine, &mut before, 3, Replace)?;
            let mut two = [0i64; 2];
            Ok([
                me.fetch_and_op(1, 0, Sum).map(drop),
                me.compare_and_swap(1, 0, 0).map(drop),
                me.flush_local(),
                scope(|s| me.rput(s, &ones, 0).map(drop)),
                scope(|s| me.rget(s, &mut two, 0).map(drop)),
                scope(|s| me.raccumulate(s, &ones, 0, Sum).map(drop)),
            ])
        }),
        "fence accumulate through target",
    );
    let passive_only = [
        "fetch_and_op",
        "compare_and_swap",
        "flush_local",
        "rput",
        "rget",
        "raccumulate",
    ];
    for (result, what) in refused.unwrap().into_iter().zip(passive_only) {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            format!("{what} through a target of a fence epoch"),
        );
    }
    t.eq(before, [0], "get_accumulate: the value before");
    let (mut root, mut own) = ([0i64; 2], [0i64]);
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| -> ferrompi::Result<()> {
            e.target(0)?.get(&mut root, 0)?;
            e.target(rank)?.get(&mut own, 3)
        }),
        "fence get",
    )
    .unwrap();
    t.eq(
        root,
        [n, 2 * n],
        "accumulate from every rank through targets",
    );
    t.eq(own, mine, "get_accumulate with Replace through a target");
    // lock_all: three tickets each from rank 0's slot 0 (slot 0 holds n), one claim of slot
    // 1 (holding 2n), a put of -1 to this rank's slot 2 completed locally, then read back
    // after a flush; request-based calls.
    let counter = t.okay(Window::<u64>::allocate(comm, 2), "allocate counters");
    let result = t.okay(
        counter.lock_all(Assert::empty(), |e| -> ferrompi::Result<_> {
            let root = e.target(0)?;
            let mut tickets = [0u64; 3];
            for ticket in &mut tickets {
                *ticket = root.fetch_and_op(1, 0, Sum)?;
            }
            let found = root.compare_and_swap(rank as u64 + 1, 0, 1)?;
            Ok((tickets, found))
        }),
        "lock_all atomics through target",
    );
    let (tickets, found) = result.unwrap();
    let total = 3 * size as u64;
    t.ok(
        tickets.windows(2).all(|w| w[0] < w[1]) && tickets[2] < total,
        format!("three increasing tickets below {total}: {tickets:?}"),
    );
    t.eq_ok(
        sum_over(comm, i32::from(found == 0)),
        1,
        "one compare_and_swap through a target wins",
    );
    t.ok(
        found == 0 || (1..=size as u64).contains(&found),
        format!("the claim's owner is a rank + 1: {found}"),
    );
    t.okay(comm.barrier(), "barrier after the atomics");
    let reread = t.okay(
        counter.lock_all(Assert::empty(), |e| e.target(0)?.fetch_and_op(0, 0, NoOp)),
        "lock_all NoOp read",
    );
    t.eq_ok(reread, total, "every ticket taken once");
    t.okay(comm.barrier(), "barrier after the reads"); // before rank 0's slot 0 is reused
    // Request-based calls and flush_local: rput to this rank's slot 0 (after the barrier,
    // nobody else writes it), read back with rget; raccumulate Max into rank 0's slot 1; a
    // put to slot 0, complete at the origin by flush_local, at the target by the unlock.
    let (value, top, last) = (
        [rank as u64 + 100],
        [rank as u64 + 1000],
        [rank as u64 + 200],
    );
    let got = t.okay(
        counter.lock_all(Assert::empty(), |e| -> ferrompi::Result<u64> {
            let me = e.target(rank)?;
            scope(|s| me.rput(s, &value, 0)?.wait().map(drop))?;
            me.flush()?;
            let mut back = [0u64];
            scope(|s| me.rget(s, &mut back, 0)?.wait().map(drop))?;
            let root = e.target(0)?;
            scope(|s| root.raccumulate(s, &top, 1, Max)?.wait().map(drop))?;
            me.put(&last, 0)?;
            me.flush_local()?;
            Ok(back[0])
        }),
        "lock_all requests through target",
    );
    t.eq_ok(got, value[0], "rput then rget through a target");
    t.okay(comm.barrier(), "barrier after the requests");
    let mut slots = [[0u64; 2]; 2];
    t.okay(
        counter.lock_all(Assert::empty(), |e| -> ferrompi::Result<()> {
            e.target(rank)?.get_now(&mut slots[0], 0)?;
            e.target(0)?.get_now(&mut slots[1], 0)
        }),
        "lock_all reads after the requests",
    )
    .unwrap();
    t.eq(
        slots[0][0],
        last[0],
        "put then flush_local through a target",
    );
    t.eq(
        slots[1][1],
        1000 + size as u64 - 1,
        "raccumulate Max from every rank through targets",
    );
    // Bounds and lengths.
    let mut short = [0u64; 1];
    let bad = t.okay(
        counter.lock_all(Assert::empty(), |e| -> ferrompi::Result<_> {
            let me = e.target(rank)?;
            Ok([
                me.fetch_and_op(1, 2, Sum).map(drop),
                me.compare_and_swap(1, 0, usize::MAX).map(drop),
                scope(|s| me.rput(s, &[1u64, 2], 1).map(drop)),
                me.get_accumulate(&[1u64, 2], &mut short, 0, Sum),
            ])
        }),
        "lock_all for bad targets",
    );
    let [past, overflow, rput_past, lengths] = bad.unwrap();
    for (result, what) in [
        (past, "fetch_and_op past the end"),
        (overflow, "compare_and_swap at usize::MAX"),
        (rput_past, "rput past the end"),
    ] {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
            what,
        );
    }
    t.err(
        lengths,
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        "get_accumulate with different lengths",
    );
    let arrays = t.okay(Window::<[i32; 2]>::allocate(comm, 1), "allocate arrays");
    t.err(
        arrays
            .lock_all(Assert::empty(), |e| {
                e.target(0)?.fetch_and_op([1, 1], 0, Sum)
            })
            .unwrap(),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "fetch_and_op of an array through a target",
    );
    t.okay(comm.barrier(), "barrier after target atomics");
}
