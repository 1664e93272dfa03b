//! Communicators used from several threads, at whatever thread level MPI provided: below
//! SERIALIZED other threads get `WrongThread`; at SERIALIZED and MULTIPLE they communicate.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Mpi, RequestSet, ThreadLevel};
use std::sync::{Condvar, Mutex};

const THREADS: i32 = 3;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let level = mpi.thread_level();
    let comm = t.okay(world.dup(), "dup");

    if level < ThreadLevel::Serialized {
        let result = std::thread::scope(|s| s.spawn(|| comm.barrier()).join().expect("thread"));
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::WrongThread { .. }),
            "barrier from another thread",
        );
        let name = std::thread::scope(|s| s.spawn(|| comm.name()).join().expect("thread"));
        t.err(
            name,
            |e| matches!(e.kind(), ErrorKind::WrongThread { .. }),
            "name from another thread",
        );
        // Cached values need no MPI call and work anywhere.
        let cached = std::thread::scope(|s| {
            s.spawn(|| (comm.rank(), comm.size()))
                .join()
                .expect("thread")
        });
        t.eq(cached, (rank, size), "rank and size from another thread");
        // A scope opened on another thread holds no pass of the thread gate: its nonblocking
        // starts are refused, whether the request is kept or pushed into a set.
        let (out, mut into) = ([1u8; 4], [0u8; 4]);
        let (sent, received) = std::thread::scope(|threads| {
            threads
                .spawn(|| {
                    ferrompi::scope(|s| {
                        let mut set = RequestSet::new(s);
                        let sent = comm.isend(s, &out, rank, 0).map(|r| set.push(r));
                        let received = comm.irecv(s, &mut into, rank, 0).map(|r| set.push(r));
                        (sent, received)
                    })
                })
                .join()
                .expect("thread")
        });
        for (result, what) in [(sent, "isend"), (received, "irecv")] {
            t.err(
                result,
                |e| matches!(e.kind(), ErrorKind::WrongThread { .. }),
                format!("scoped {what} from another thread"),
            );
        }
        // Dropping a communicator on a thread that may not call MPI leaks it instead of freeing.
        let extra = t.okay(world.dup(), "dup");
        std::thread::scope(|s| {
            s.spawn(move || drop(extra))
                .join()
                .expect("drop on another thread")
        });
        t.okay(comm.barrier(), "the initialising thread still communicates");
        return;
    }

    // SERIALIZED or MULTIPLE: every thread exchanges with the ring neighbours on its own tag.
    // At MULTIPLE the threads run concurrently. At SERIALIZED a blocking call holds ferrompi's
    // lock until it completes, so, as in C, the threads must take turns in the same order on every
    // rank or two ranks could each block on a message the other's waiting thread would send.
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let turn = (Mutex::new(0), Condvar::new());
    let results: Vec<ferrompi::Result<(i32, i64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (comm, turn) = (&comm, &turn);
                s.spawn(move || {
                    let serialized = level == ThreadLevel::Serialized;
                    if serialized {
                        let mut current = turn.0.lock().expect("lock");
                        while *current != thread {
                            current = turn.1.wait(current).expect("wait");
                        }
                    }
                    let mut got = [0i64];
                    let result = comm.sendrecv(
                        &[i64::from(rank * 100 + thread)],
                        next,
                        thread,
                        &mut got,
                        prev,
                        thread,
                    );
                    // And through a scope of this thread's own: at Serialized it holds no pass
                    // of the gate (each start takes the lock), at Multiple it holds one.
                    let out = [i64::from(rank * 100 + thread)];
                    let mut scoped = [0i64];
                    let result = result.and_then(|_| {
                        ferrompi::scope(|s| {
                            let mut set = RequestSet::new(s);
                            set.push(comm.irecv(s, &mut scoped, prev, THREADS + thread)?);
                            set.push(comm.isend(s, &out, next, THREADS + thread)?);
                            set.wait_all()
                        })
                    });
                    let result = result.map(|()| {
                        assert_eq!(scoped, got, "the scoped exchange got what sendrecv did");
                    });
                    if serialized {
                        *turn.0.lock().expect("lock") += 1;
                        turn.1.notify_all();
                    }
                    result.map(|_| (thread, got[0]))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for result in results {
        let (thread, got) = t.okay(result, "threaded exchange");
        t.eq(
            got,
            i64::from(prev * 100 + thread),
            format!("thread {thread} got its neighbour's value"),
        );
    }
    let names: Vec<_> = std::thread::scope(|s| {
        (0..THREADS)
            .map(|_| s.spawn(|| comm.name()))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for name in names {
        t.okay(name, "name from another thread");
    }
    t.ok(
        level >= ThreadLevel::Serialized,
        format!("provided {level:?}"),
    );
}
