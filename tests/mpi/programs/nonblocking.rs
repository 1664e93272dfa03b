//! Nonblocking point-to-point: scoped and owned requests, request sets (wait/test all/any/some),
//! 10 000 outstanding requests, cancel, completion on drop, and leaks that must stay sound.

use crate::checks::Checks;
use crate::for_each_type;
use crate::values::{TestValue, values};
use ferrompi::{ANY_SOURCE, Communicator, Mpi, RequestSet, Status, scope};

fn neighbours(comm: &Communicator<'_>) -> (i32, i32) {
    let (rank, size) = (comm.rank(), comm.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

/// Ring with borrowed buffers in a scope; works with one rank too (the receive is posted first).
fn ring_scoped<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks, len: usize) {
    let (next, prev) = neighbours(comm);
    let out: Vec<T> = values(comm.rank() as u64 + 11, len);
    let mut inbox = vec![T::default(); len];
    let (sent, got) = scope(|s| {
        let recv = comm.irecv(s, &mut inbox, prev, 21)?;
        let send = comm.isend(s, &out, next, 21)?;
        Ok::<_, ferrompi::Error>((send.wait()?, recv.wait()?))
    })
    .expect("ring");
    let _ = sent;
    t.eq(
        inbox,
        values(prev as u64 + 11, len),
        format!("isend/irecv {} x {len}", std::any::type_name::<T>()),
    );
    t.eq((got.source(), got.tag()), (prev, 21), "irecv status");
    t.eq_ok(got.count::<T>(), len, "irecv count");
}

fn ring_all_sizes<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks) {
    for len in [0, 1, 1000] {
        ring_scoped::<T>(comm, t, len);
    }
}

/// From every rank to every rank (self included), through one request set.
fn all_pairs<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (comm.rank(), comm.size());
    let outgoing: Vec<Vec<T>> = (0..size)
        .map(|to| values(rank as u64 * 100 + to as u64, 64))
        .collect();
    let mut incoming: Vec<Vec<T>> = (0..size).map(|_| vec![T::default(); 64]).collect();
    let mut statuses: Vec<Status> = Vec::new();
    scope(|s| {
        let mut set = RequestSet::with_capacity(s, 2 * size as usize);
        for (from, buf) in incoming.iter_mut().enumerate() {
            set.push(t.okay(comm.irecv(s, buf, from as i32, 25), "irecv"));
        }
        for (to, buf) in outgoing.iter().enumerate() {
            set.push(t.okay(comm.isend(s, buf, to as i32, 25), "isend"));
        }
        t.eq(set.pending(), 2 * size as usize, "pending before wait_all");
        t.okay(set.wait_all_statuses(&mut statuses), "wait_all");
        t.eq(set.pending(), 0, "pending after wait_all");
    });
    let name = std::any::type_name::<T>();
    for (from, buf) in incoming.iter().enumerate() {
        t.eq(
            buf,
            &values::<T>(from as u64 * 100 + rank as u64, 64),
            format!("all-pairs {name} from {from}"),
        );
        t.eq(
            statuses[from].source(),
            from as i32,
            "all-pairs status source",
        );
    }
}

/// Owned requests completed together (`OwnedSet`): every rank receives one message from every
/// rank and takes them as they come (`wait_any`, `wait_some`, `test_some`), then gets its send
/// buffers back from `wait_all` (or polling `test_all`); a receive a `test` already completed
/// is reported too.
fn owned_sets(world: &Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (world.rank(), world.size());
    let message = |from: i32, to: i32| vec![i64::from(from) * 1000 + i64::from(to); 16];
    for round in 0..3 {
        let mut inbox = ferrompi::OwnedSet::with_capacity(size as usize);
        for from in 0..size {
            let request = t.okay(
                world.irecv_owned(vec![0i64; 16], from, 40 + round),
                "irecv_owned",
            );
            t.eq(inbox.push(request), from as usize, "set index = push order");
        }
        // Debug shows counts, never the buffers MPI may still be writing.
        let shown = format!("{inbox:?}");
        t.ok(
            shown.contains("pending") && !shown.contains("[0, 0"),
            format!("OwnedSet Debug reads no buffer: {shown}"),
        );
        let mut outbox = ferrompi::OwnedSet::new();
        for to in 0..size {
            let request = t.okay(
                world.isend_owned(message(rank, to), to, 40 + round),
                "isend_owned",
            );
            outbox.push(request);
        }
        let mut seen = vec![false; size as usize];
        let mut got = Vec::new();
        while seen.iter().any(|s| !s) {
            got.clear();
            match round {
                0 => got.extend(t.okay(inbox.wait_any(), "wait_any")),
                1 => {
                    t.okay(inbox.wait_some(&mut got), "wait_some");
                }
                _ => {
                    t.okay(inbox.test_some(&mut got), "test_some");
                }
            }
            for (index, buffer, status) in got.drain(..) {
                t.eq(status.source(), index as i32, "index is the sender's slot");
                t.eq(buffer, message(index as i32, rank), "owned set content");
                t.ok(
                    !std::mem::replace(&mut seen[index], true),
                    "each request once",
                );
            }
        }
        t.ok_with(inbox.wait_any(), |none| none.is_none(), "nothing pending");
        t.eq(inbox.pending(), 0, "all handed back");
        let sent = if round == 2 {
            loop {
                if let Some(sent) = t.okay(outbox.test_all(), "test_all") {
                    break sent;
                }
            }
        } else {
            t.okay(outbox.wait_all(), "wait_all")
        };
        t.eq(sent.len(), size as usize, "every send buffer back");
        for (to, buffer) in sent {
            t.eq(
                buffer,
                message(rank, to as i32),
                "send buffer back unchanged",
            );
        }
    }
    // A receive that a `test` completed before it joined the set.
    let mut early = t.okay(world.irecv_owned(vec![0u8; 4], rank, 49), "irecv to self");
    let send = t.okay(world.isend_owned(vec![7u8; 4], rank, 49), "isend to self");
    while !t.okay(early.test(), "test before push") {}
    let mut set = ferrompi::OwnedSet::new();
    set.push(early);
    t.ok_with(
        set.test_any(),
        |done| matches!(done, Some((0, buffer, _)) if buffer == &vec![7u8; 4]),
        "a completed request is reported once pushed",
    );
    t.okay(send.wait().1, "send to self");

    // Bytes received as `bool` in an owned set, after a send in the same set: only the receive
    // is repaired when handed back (the set knows which requests receive).
    let mut mixed = ferrompi::OwnedSet::new();
    let out = t.okay(
        world.isend_owned(vec![true; 2], rank, 48),
        "isend_owned bool",
    );
    mixed.push(out);
    let got = t.okay(
        world.irecv_owned(vec![false; 4], rank, 47),
        "irecv_owned bool",
    );
    mixed.push(got);
    t.okay(world.send(&[0u8, 1, 2, 255], rank, 47), "bytes to self");
    t.okay(world.recv(&mut [false; 2], rank, 48), "bools from self");
    let back = t.okay(mixed.wait_all(), "wait_all bool");
    t.eq(
        back.into_iter()
            .map(|(i, b)| (i, b.into_iter().map(u8::from).collect::<Vec<_>>()))
            .collect::<Vec<_>>(),
        vec![(0, vec![1, 1]), (1, vec![0, 1, 1, 1])],
        "owned set: the received bytes are valid bools, the sent buffer as it was",
    );
}

/// A scoped set whose receive of `bool` (at index 1, after a send) gets arbitrary bytes: the
/// buffer holds valid bools once the set completes it. Then `clear` and a second batch in the
/// same set: pending counts start again from the new pushes.
fn set_repairs_and_reuse(world: &Communicator<'_>, t: &mut Checks) {
    let rank = world.rank();
    let bytes = [0u8, 1, 2, 255];
    let mut bools = [false; 4];
    let mut again = [0u8; 4];
    scope(|s| {
        let mut set = RequestSet::new(s);
        set.push(t.okay(world.isend(s, &bytes, rank, 45), "isend bytes"));
        set.push(t.okay(world.irecv(s, &mut bools, rank, 45), "irecv as bool"));
        t.eq(set.pending(), 2, "two pending");
        t.okay(set.wait_all(), "wait_all");
        t.eq((set.pending(), set.len()), (0, 2), "complete, both kept");
        t.okay(set.clear(), "clear");
        t.eq((set.pending(), set.len()), (0, 0), "cleared");
        set.push(t.okay(world.irecv(s, &mut again, rank, 46), "irecv again"));
        set.push(t.okay(world.isend(s, &bytes, rank, 46), "isend again"));
        t.eq((set.pending(), set.len()), (2, 2), "second batch pending");
        t.okay(set.wait_all(), "wait_all again");
        t.eq(set.pending(), 0, "second batch complete");
    });
    t.eq(
        bools.map(u8::from),
        [0, 1, 1, 1],
        "bytes received as bool in a set are valid bools",
    );
    t.eq(again, bytes, "second batch content");
    // A `bool` receive waited for on its own, and one completed by its drop (`get_status`
    // has seen it complete, so the drop's cancel finds nothing to cancel): both repaired when
    // the scope ends. A blocking send to oneself may return before the message matches the
    // posted receive (MPICH 5 with more than one rank), so the test waits for the match.
    let (mut waited, mut dropped) = ([false; 4], [false; 4]);
    scope(|s| {
        let receiving = t.okay(world.irecv(s, &mut waited, rank, 47), "irecv bool");
        t.okay(world.send(&bytes, rank, 47), "send bytes");
        t.okay(receiving.wait(), "wait for the bool receive");
        let mut pending = t.okay(
            world.irecv(s, &mut dropped, rank, 48),
            "irecv bool, dropped",
        );
        t.okay(world.send(&bytes, rank, 48), "send bytes");
        while t.okay(pending.get_status(), "get_status").is_none() {}
        drop(pending);
    });
    t.eq(
        waited.map(u8::from),
        [0, 1, 1, 1],
        "a bool receive waited for: valid bools",
    );
    t.eq(
        dropped.map(u8::from),
        [0, 1, 1, 1],
        "a bool receive dropped: valid bools",
    );
    // A scope's first repairs are kept in the scope itself: a `bool` receive in a scope of its
    // own, as a convergence flag each iteration, allocates nothing. Past them, the scope keeps
    // the rest on the heap, and every one is still made.
    let before = crate::allocations();
    for _ in 0..8 {
        let mut flag = [false; 4];
        scope(|s| {
            let receiving = t.okay(world.irecv(s, &mut flag, rank, 49), "irecv a flag");
            t.okay(world.send(&bytes, rank, 49), "send bytes");
            t.okay(receiving.wait(), "wait for the flag");
        });
        t.eq(flag.map(u8::from), [0, 1, 1, 1], "the flag: valid bools");
    }
    t.eq(
        crate::allocations() - before,
        0,
        "bool receives in a scope allocate nothing",
    );
    let mut many = [[false; 4]; 9];
    scope(|s| {
        for row in many.iter_mut() {
            let receiving = t.okay(world.irecv(s, row, rank, 50), "irecv one of 9");
            t.okay(world.send(&bytes, rank, 50), "send bytes");
            t.okay(receiving.wait(), "wait for one of 9");
        }
    });
    for row in many {
        t.eq(
            row.map(u8::from),
            [0, 1, 1, 1],
            "9 bool receives in one scope: valid bools",
        );
    }
}

/// Requests started straight into a set (`irecv_into`, `isend_into`): an exchange with every
/// rank in batches that allocate nothing once warm, indices in the order posted, a `bool`
/// receive repaired, a refused start that leaves the set as it was, and a set dropped with an
/// unmatched receive started into it (cancelled, not waited for forever).
fn started_into_sets(world: &Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let mut storage = ferrompi::RequestStorage::with_capacity(2 * n);
    let mut blocks = vec![[0i64; 3]; n];
    let mut allocations_when_warm = 0;
    for batch in 0..10 {
        if batch == 1 {
            allocations_when_warm = crate::allocations();
        }
        let out = [i64::from(rank), batch, -1];
        storage = scope(|s| {
            let mut set = RequestSet::from_storage(s, std::mem::take(&mut storage));
            for (from, buf) in blocks.iter_mut().enumerate() {
                let index = world.irecv_into(&mut set, s, buf, from as i32, 60 + batch as i32);
                t.eq_ok(index, from, "irecv_into: its index, as posted");
            }
            for to in 0..size {
                let index = world.isend_into(&mut set, s, &out, to, 60 + batch as i32);
                t.eq_ok(index, n + to as usize, "isend_into: its index, as posted");
            }
            t.eq((set.len(), set.pending()), (2 * n, 2 * n), "all pending");
            t.okay(set.wait_all(), "wait_all into");
            t.eq(set.pending(), 0, "all complete");
            set.into_storage()
        });
        t.ok(
            (blocks.iter().enumerate()).all(|(from, b)| *b == [from as i64, batch, -1]),
            "started into a set: every block delivered",
        );
    }
    t.eq(
        crate::allocations() - allocations_when_warm,
        0,
        "heap allocations in 9 warm batches started into a set",
    );

    // A bool receive after a send, started into the set: repaired once complete.
    let bytes = [2u8, 0, 1, 200];
    let mut bools = [false; 4];
    scope(|s| {
        let mut set = RequestSet::new(s);
        t.eq_ok(
            world.isend_into(&mut set, s, &bytes, rank, 47),
            0,
            "send index",
        );
        t.eq_ok(
            world.irecv_into(&mut set, s, &mut bools, rank, 47),
            1,
            "bool receive index",
        );
        t.okay(set.wait_all(), "wait_all bool into");
    });
    t.eq(
        bools.map(u8::from),
        [1, 0, 1, 1],
        "bool receive into a set repaired",
    );

    // A refused start (rank, tag) leaves the set as it was; later starts take the next index.
    let mut flags = [false; 2];
    let mut inbox = [0u16; 2];
    scope(|s| {
        let mut set = RequestSet::with_capacity(s, 1);
        t.eq_ok(
            world.irecv_into(&mut set, s, &mut inbox, rank, 48),
            0,
            "first index",
        );
        t.err(
            world.irecv_into(&mut set, s, &mut flags, size, 48),
            |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidRank { .. }),
            "irecv_into from a rank past the size",
        );
        t.err(
            world.isend_into(&mut set, s, &[1u16], rank, -5),
            |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidTag { .. }),
            "isend_into with a negative tag",
        );
        t.eq(
            (set.len(), set.pending()),
            (1, 1),
            "refused starts leave the set as it was",
        );
        t.eq_ok(
            world.isend_into(&mut set, s, &[9u16, 8], rank, 48),
            1,
            "next index",
        );
        t.okay(set.wait_all(), "wait_all after refusals");
    });
    t.eq(
        inbox,
        [9, 8],
        "the set still completes its requests after refusals",
    );

    // Dropping a set with an unmatched receive started into it cancels the receive.
    let mut never = [0u8; 4];
    scope(|s| {
        let mut set = RequestSet::new(s);
        t.okay(
            world.irecv_into(&mut set, s, &mut never, ANY_SOURCE, 997),
            "unmatched",
        );
        t.okay(
            world.isend_into(&mut set, s, &[1u8], rank, 49),
            "send to self",
        );
        let mut one = [0u8];
        t.okay(world.recv(&mut one, rank, 49), "its receive");
    });
    t.ok(
        true,
        "a set dropped with an unmatched receive started into it returned",
    );
}

/// A set working in lent storage (`RequestSet::with_storage`): batches from empty storage that
/// grow it (the storage keeps the grown memory), no allocation once warm, `wait_some` with the
/// storage's scratch, a leaked set that leaves the storage sound, `into_storage` taking the
/// memory, and a dropped set with an unmatched receive.
fn lent_storage(world: &Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    // Capacity 0: the first batch grows the memory one request at a time, in the storage.
    let mut storage = ferrompi::RequestStorage::default();
    let mut blocks = vec![[0u32; 2]; n];
    let mut got = Vec::with_capacity(2 * n);
    let mut allocations_when_warm = 0;
    for batch in 0..8u32 {
        if batch == 1 {
            allocations_when_warm = crate::allocations();
        }
        let out = [rank as u32, batch];
        let tag = 70 + batch as i32;
        let done = scope(|s| {
            let mut set = RequestSet::with_storage(s, &mut storage);
            for (from, buf) in blocks.iter_mut().enumerate() {
                world.irecv_into(&mut set, s, buf, from as i32, tag)?;
            }
            for to in 0..size {
                set.push(world.isend(s, &out, to, tag)?);
            }
            // Half the batches take the requests as they complete (the storage's scratch).
            let mut done = 0;
            if batch % 2 == 0 {
                while set.pending() > 0 {
                    done += set.wait_some(&mut got)?;
                    got.clear();
                }
            } else {
                set.wait_all()?;
                done = set.len();
            }
            Ok::<_, ferrompi::Error>(done)
        });
        t.eq_ok(done, 2 * n, "lent storage: every request completed");
        t.ok(
            (blocks.iter().enumerate()).all(|(from, b)| *b == [from as u32, batch]),
            "lent storage: every block delivered",
        );
        // Room for any n requests (there were n receives and 2n requests).
        t.ok(
            storage.capacity() >= n,
            "lent storage keeps the memory the set grew",
        );
    }
    t.eq(
        crate::allocations() - allocations_when_warm,
        0,
        "heap allocations in 7 warm batches in lent storage",
    );

    // A set leaked with nothing pending: the storage still owns its memory, once.
    let capacity = storage.capacity();
    let mut cells = vec![[0u8]; 2 * capacity];
    scope(|s| {
        let mut set = RequestSet::with_storage(s, &mut storage);
        // More receives and sends than the capacity: the set grows, and is leaked later.
        for (k, cell) in cells.iter_mut().enumerate() {
            t.okay(world.irecv_into(&mut set, s, cell, rank, 90), "irecv_into");
            t.okay(
                world.isend_into(&mut set, s, &[1u8], rank, 90),
                "isend_into",
            );
            t.eq(set.len(), 2 * k + 2, "grown in lent storage");
        }
        t.okay(set.wait_all(), "wait_all before the leak");
        std::mem::forget(set);
    });
    t.ok(cells.iter().all(|c| *c == [1]), "received in a growing set");
    t.ok(
        storage.capacity() >= 2 * capacity,
        "a leaked set leaves the grown memory in the storage",
    );
    let grown = storage.capacity();
    let mut got = [0u8; 3];
    scope(|s| {
        let mut set = RequestSet::with_storage(s, &mut storage);
        t.okay(
            world.irecv_into(&mut set, s, &mut got, rank, 91),
            "irecv_into after a leak",
        );
        t.okay(
            world.isend_into(&mut set, s, &[4u8, 5, 6], rank, 91),
            "isend_into after a leak",
        );
        t.okay(set.wait_all(), "wait_all after a leak");
    });
    t.eq(got, [4, 5, 6], "storage reused after a leaked set");

    // `into_storage` hands over the lent memory and leaves the storage empty.
    let taken = scope(|s| {
        let mut set = RequestSet::with_storage(s, &mut storage);
        t.okay(
            world.isend_into(&mut set, s, &[7u8], rank, 92),
            "isend_into",
        );
        let mut one = [0u8];
        t.okay(world.recv(&mut one, rank, 92), "its receive");
        set.into_storage()
    });
    t.eq(
        (taken.capacity() >= grown, storage.capacity()),
        (true, 0),
        "into_storage of a set in lent storage: the memory moves out",
    );
    storage = taken;

    // Dropped with an unmatched receive: cancelled, and the storage stays usable.
    let mut never = [0u8; 4];
    scope(|s| {
        let mut set = RequestSet::with_storage(s, &mut storage);
        t.okay(
            world.irecv_into(&mut set, s, &mut never, ANY_SOURCE, 996),
            "unmatched into lent storage",
        );
    });
    t.ok(
        storage.capacity() >= grown,
        "storage kept after a cancelled receive",
    );
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = neighbours(&world);
    for_each_type!(ring_all_sizes(&world, t));
    ring_scoped::<u8>(&world, t, 1 << 20);
    ring_scoped::<u8>(&world, t, 64 << 20);

    // Synchronous mode.
    let mut got = [0u32; 3];
    let sent3 = [rank as u32; 3];
    scope(|s| {
        let mut r = t.okay(world.irecv(s, &mut got, prev, 22), "irecv");
        let w = t.okay(world.issend(s, &sent3, next, 22), "issend");
        while t.okay(r.get_status(), "scoped get_status").is_none() {}
        t.ok_with(
            r.get_status(),
            |st| st.is_some_and(|st| st.tag() == 22),
            "status peeked",
        );
        t.okay(w.wait(), "issend wait");
        t.okay(r.wait(), "irecv wait");
    });
    t.eq(got, [prev as u32; 3], "issend delivered");

    // Owned buffers come back on completion, also through `.await`-free test loops.
    let recv = t.okay(world.irecv_owned(vec![0i64; 500], prev, 23), "irecv_owned");
    let send = t.okay(
        world.isend_owned(values::<i64>(rank as u64, 500), next, 23),
        "isend_owned",
    );
    let (sent_back, status) = send.wait();
    t.okay(status, "isend_owned wait");
    t.eq(
        sent_back,
        values::<i64>(rank as u64, 500),
        "send buffer handed back unchanged",
    );
    let mut recv = recv;
    // MPI_Request_get_status reports completion without completing: the request stays usable.
    while t.okay(recv.get_status(), "owned get_status").is_none() {}
    t.ok_with(
        recv.get_status(),
        |s| s.is_some_and(|s| s.source() == prev),
        "get_status again",
    );
    while !t.okay(recv.test(), "owned test") {}
    let (inbox, status) = recv.wait();
    t.ok_with(status, |s| s.source() == prev, "owned status after test");
    t.eq(
        inbox,
        values::<i64>(prev as u64, 500),
        "irecv_owned content",
    );
    let boxed: Box<[f32]> = vec![1.5f32; 8].into_boxed_slice();
    let recv = t.okay(
        world.irecv_owned(vec![0f32; 8].into_boxed_slice(), prev, 24),
        "irecv boxed",
    );
    let (_, status) = t
        .okay(world.isend_owned(boxed, next, 24), "isend boxed")
        .wait();
    t.okay(status, "boxed send");
    let (inbox, status) = recv.wait();
    t.okay(status, "boxed recv");
    t.eq(&inbox[..], &[1.5f32; 8][..], "boxed slice round trip");

    owned_sets(&world, t);
    set_repairs_and_reuse(&world, t);
    started_into_sets(&world, t);
    lent_storage(&world, t);

    // All-pairs exchange of every type through one request set.
    for_each_type!(all_pairs(&world, t));

    // 10 000 outstanding requests each way, posted and then completed by one MPI_Waitall.
    const MANY: usize = 10_000;
    let out: Vec<u32> = (0..MANY as u32).map(|i| i ^ rank as u32).collect();
    let mut inbox = vec![u32::MAX; MANY];
    scope(|s| {
        let mut set = RequestSet::with_capacity(s, 2 * MANY);
        for (i, slot) in inbox.chunks_mut(1).enumerate() {
            set.push(t.okay(
                world.irecv(s, slot, prev, (i % 30_000) as i32),
                "irecv many",
            ));
        }
        for (i, value) in out.chunks(1).enumerate() {
            set.push(t.okay(
                world.isend(s, value, next, (i % 30_000) as i32),
                "isend many",
            ));
        }
        t.okay(set.wait_all(), "wait_all many");
    });
    let want: Vec<u32> = (0..MANY as u32).map(|i| i ^ prev as u32).collect();
    t.eq(inbox == want, true, "10 000 messages arrived in order");

    // Post N, wait all, repeat: the set's memory is reused from batch to batch, and once warm a
    // batch makes no heap allocation at all.
    let mut storage = ferrompi::RequestStorage::with_capacity(2 * size as usize);
    let capacity = storage.capacity();
    let block: Vec<f64> = vec![f64::from(rank); 256];
    let mut blocks = vec![vec![0.0f64; 256]; size as usize];
    let mut allocations_when_warm = 0;
    for batch in 0..20 {
        if batch == 1 {
            allocations_when_warm = crate::allocations();
        }
        storage = scope(|s| {
            let mut set = ferrompi::RequestSet::from_storage(s, std::mem::take(&mut storage));
            for (from, buf) in blocks.iter_mut().enumerate() {
                set.push(t.okay(world.irecv(s, buf, from as i32, 400 + batch), "irecv"));
            }
            for to in 0..size {
                set.push(t.okay(world.isend(s, &block, to, 400 + batch), "isend"));
            }
            t.okay(set.wait_all(), "wait_all batch");
            set.into_storage()
        });
        t.ok(storage.capacity() == capacity, "storage keeps its capacity");
        t.ok(
            blocks
                .iter()
                .enumerate()
                .all(|(from, b)| b[255] == from as f64),
            "batch content",
        );
    }
    let allocated = crate::allocations() - allocations_when_warm;
    t.eq(
        allocated,
        0,
        "heap allocations in 19 warm batches of post-N / wait-all",
    );

    // wait_any / wait_some / test_*: complete every request exactly once.
    let mut slots = [[0u8; 4]; 6];
    let sends: Vec<[u8; 4]> = (0..6u8).map(|i| [i, rank as u8, 0, 1]).collect();
    scope(|s| {
        let mut recvs = RequestSet::new(s);
        let mut others = RequestSet::new(s);
        for (i, slot) in slots.iter_mut().enumerate() {
            recvs.push(t.okay(
                world.irecv(s, std::slice::from_mut(slot), prev, 30 + i as i32),
                "irecv",
            ));
        }
        t.eq_ok(recvs.test_all(), false, "nothing arrived yet");
        t.ok_with(recvs.test_any(), |v| v.is_none(), "test_any before sends");
        // No rank sends before every rank has tested its empty receives.
        t.okay(world.barrier(), "barrier before sends");
        for (i, value) in sends.iter().enumerate().rev() {
            others.push(t.okay(
                world.isend(s, std::slice::from_ref(value), next, 30 + i as i32),
                "isend",
            ));
        }
        let mut seen = Vec::new();
        let (i, status) = t.okay(recvs.wait_any(), "wait_any").expect("one pending");
        t.eq(status.tag(), 30 + i as i32, "wait_any index matches tag");
        seen.push(i);
        let mut done = Vec::new();
        while recvs.pending() > 0 {
            let n = t.okay(recvs.wait_some(&mut done), "wait_some");
            t.ok(n > 0, "wait_some completes at least one");
        }
        seen.extend(done.iter().map(|&(i, _)| i));
        for &(i, status) in &done {
            t.eq(status.tag(), 30 + i as i32, "wait_some index matches tag");
        }
        seen.sort();
        t.eq(
            seen,
            (0..6).collect::<Vec<_>>(),
            "every receive completed exactly once",
        );
        t.ok_with(recvs.wait_any(), |v| v.is_none(), "none pending");
        let mut later = Vec::new();
        while others.pending() > 0 {
            t.okay(others.test_some(&mut later), "test_some");
        }
        t.eq(later.len(), 6, "test_some saw all sends");
    });
    for (i, slot) in slots.iter().enumerate() {
        t.eq(
            *slot,
            [i as u8, prev as u8, 0, 1],
            "wait_any/wait_some content",
        );
    }

    // Cancel a receive that nothing matches; drop of a pending receive cancels it (no hang).
    let mut never = [0u8; 8];
    let mut never2 = [0u8; 8];
    scope(|s| {
        let mut r = t.okay(
            world.irecv(s, &mut never, ANY_SOURCE, 999),
            "irecv unmatched",
        );
        t.ok_with(r.test(), |v| v.is_none(), "unmatched receive is pending");
        t.ok_with(r.get_status(), |v| v.is_none(), "get_status: still pending");
        t.okay(r.cancel(), "cancel");
        let status = t.okay(r.wait(), "wait after cancel");
        t.eq_ok(status.cancelled(), true, "receive was cancelled");
        let pending = t.okay(
            world.irecv(s, &mut never2, ANY_SOURCE, 998),
            "irecv to drop",
        );
        drop(pending);
    });
    // A set dropped while pending completes everything: it cancels the receive nothing matches
    // (it knows each request's kind, also after growing from empty) and waits for its sends,
    // and counts a request completed before it was pushed as not pending. The sends' receives are
    // posted first, in another set, so that they are matched, never cancelled by the drop.
    let mut unmatched = [0u8; 4];
    let mut early = [0u8; 1];
    let mut matched = [[0u8; 2]; 6];
    let outgoing: Vec<[u8; 2]> = (0..6u8).map(|i| [i, rank as u8]).collect();
    scope(|s| {
        let mut inbox = RequestSet::new(s);
        for (i, slot) in matched.iter_mut().enumerate() {
            let tag = 980 + i as i32;
            inbox.push(t.okay(world.irecv(s, slot, rank, tag), "irecv from self"));
        }
        let mut set = RequestSet::new(s);
        let mut done = t.okay(
            world.irecv(s, &mut early, rank, 990),
            "irecv, finished early",
        );
        t.okay(world.send(&[5u8], rank, 990), "send to self");
        while t.okay(done.test(), "test until done").is_none() {}
        set.push(done);
        t.eq(set.pending(), 0, "a finished request is not pending");
        set.push(t.okay(
            world.irecv(s, &mut unmatched, rank, 991),
            "irecv, never matched",
        ));
        for (i, value) in outgoing.iter().enumerate() {
            let tag = 980 + i as i32;
            set.push(t.okay(world.isend(s, value, rank, tag), "isend to self"));
        }
        t.eq(set.len(), 8, "every request has its place");
        t.eq(set.pending(), 7, "all but the finished one pending");
        drop(set); // must not wait for the unmatched receive
        t.okay(inbox.wait_all(), "the sends' receives");
    });
    t.eq(early, [5], "the request finished before its push");
    t.eq(unmatched, [0; 4], "the cancelled receive got nothing");
    t.ok(
        matched
            .iter()
            .enumerate()
            .all(|(i, m)| *m == [i as u8, rank as u8]),
        "a dropped set's sends arrived",
    );

    let mut sink = [0u8; 1];
    let refused = scope(|s| {
        let r = world.irecv(s, &mut sink, prev, 997)?;
        let mut w = world.isend(s, &[1u8], next, 997)?;
        let refused = w.cancel();
        w.wait()?;
        r.wait()?;
        Ok::<_, ferrompi::Error>(refused)
    });
    let refused = t.okay(refused, "exchange around a refused cancel");
    t.err(
        refused,
        |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidArgument { .. }),
        "cancelling a send is refused",
    );

    // A truncated nonblocking receive reports the truncation class (not for self on Open MPI).
    let mut short = [0u64; 2];
    let result = scope(|s| {
        let r = world.irecv(s, &mut short, prev, 26)?;
        world.isend(s, &[7u64; 5], next, 26)?.wait()?;
        r.wait()
    });
    t.truncated(result, size == 1, "irecv into a short buffer");
    t.okay(world.barrier(), "communicator still works after truncation");

    // Leaking an owned request leaks its buffer: sound, and the message still flows.
    let leaked = t.okay(
        world.isend_owned(vec![rank as u8; 16], next, 27),
        "isend_owned to leak",
    );
    std::mem::forget(leaked);
    let mut got = [0u8; 16];
    t.okay(
        world.recv(&mut got, prev, 27),
        "receive the leaked send's message",
    );
    t.eq(got, [prev as u8; 16], "leaked send delivered");
}
