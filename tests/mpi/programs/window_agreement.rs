//! Windows whose processes must stay in step: a window of a type more aligned than MPI's
//! memory; fence sequences that another epoch, a refused thread or one rank alone could put
//! out of step; sizes only one rank cannot allocate; a refused thread in a shared window's
//! epoch. Each case used to give wrong data, a hang or undefined behaviour; each must now give
//! the same answer on every rank and leave the window usable.

use super::rma::ring;
use crate::checks::Checks;
use bytemuck::{Pod, Zeroable};
use ferrompi::ErrorKind;
use ferrompi::window::{Assert, SharedWindow, Window};
use ferrompi::{Bytes, Communicator, Error, LockType, Mpi, ThreadLevel};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let restricted = mpi.thread_level() < ThreadLevel::Serialized;
    over_aligned(&world, t);
    fence_sequence(&world, restricted, t);
    one_rank_alone_between_fences(&world, t);
    sizes_one_rank_refuses(&world, t);
    let node = t.okay(world.split_shared(0), "split_shared");
    shared_sizes_one_rank_refuses(&node, t);
    if restricted {
        refused_thread_in_a_shared_epoch(&node, t);
    }
}

/// 128-byte aligned plain data: more than any MPI promises for the memory it allocates.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C, align(128))]
struct Wide {
    words: [u64; 16],
}

fn wide(value: i32) -> Bytes<Wide> {
    Bytes(Wide {
        words: [u64::try_from(value).unwrap_or(0); 16],
    })
}

/// A window of an over-aligned type, from MPI's memory and from a vector: made on every rank
/// (Rust never refers to MPI's memory as the type, so its address need not be aligned), and
/// its values go where they should.
fn over_aligned(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, prev) = ring(comm);
    let rank = comm.rank();
    let win = t.okay(Window::<Bytes<Wide>>::allocate(comm, 3), "allocate Wide");
    t.eq(win.local_len(), 3, "length of the Wide window");
    let mine = [wide(rank + 1)];
    t.okay(
        win.fence(Assert::empty(), |e| e.put(&mine, next, 1)),
        "fence put of a Wide",
    )
    .unwrap();
    let mut got = [wide(0); 3];
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.get(&mut got, rank, 0)),
        "fence get of the Wides",
    )
    .unwrap();
    t.eq(got, [wide(0), wide(prev + 1), wide(0)], "the Wide put");
    let back = t.okay(win.into_vec(), "into_vec of the Wide window");
    t.eq(
        back,
        vec![wide(0), wide(prev + 1), wide(0)],
        "the Wides back",
    );
    let values = vec![wide(rank), wide(rank + 7)];
    let win = t.okay(Window::from_vec(comm, values.clone()), "from_vec of Wides");
    let back = t.okay(win.into_vec(), "into_vec of the Wide vector");
    t.eq(back, values, "the Wide vector back");
}

/// Every fence makes the same MPI calls on every rank: an epoch of another kind is refused
/// while the fence sequence is open (MPI forbids it), and a fence or an epoch refused on a
/// thread the level does not allow changes nothing. The peer then reads what was put.
fn fence_sequence(comm: &Communicator<'_>, restricted: bool, t: &mut Checks) {
    let (next, _) = ring(comm);
    let rank = comm.rank();
    let win = t.okay(Window::<i64>::allocate(comm, 2), "allocate");
    let group = t.okay(comm.group(), "group");
    t.okay(
        win.fence(Assert::empty(), |e| e.put(&[10i64], next, 0)),
        "first fence",
    )
    .unwrap();
    let misuse = |e: &Error| matches!(e.kind(), ErrorKind::EpochMisuse { .. });
    t.err(
        win.lock(LockType::Shared, rank, Assert::empty(), |_| ()),
        misuse,
        "lock while the fence sequence is open",
    );
    t.err(
        win.lock_all(Assert::empty(), |_| ()),
        misuse,
        "lock_all while the fence sequence is open",
    );
    t.err(
        win.access(&group, Assert::empty(), |_| ()),
        misuse,
        "access while the fence sequence is open",
    );
    t.err(
        win.expose(&group, Assert::empty()).map(drop),
        misuse,
        "expose while the fence sequence is open",
    );
    if restricted {
        let (lock_all, fence) = std::thread::scope(|s| {
            s.spawn(|| {
                let lock_all = win.lock_all(Assert::empty(), |_| ()).map(drop);
                let fence = win.fence(Assert::empty(), |_| ()).map(drop);
                (lock_all, fence)
            })
            .join()
            .expect("joined")
        });
        t.err(
            lock_all,
            |e| {
                matches!(
                    e.kind(),
                    ErrorKind::EpochMisuse { .. } | ErrorKind::WrongThread { .. }
                )
            },
            "lock_all on a refused thread",
        );
        t.err(
            fence,
            |e| matches!(e.kind(), ErrorKind::WrongThread { .. }),
            "fence on a refused thread",
        );
    }
    let mut got = second_and_closing_fence(&win, next, rank, t);
    // Closed with NOSUCCEED: every epoch is allowed again.
    t.okay(
        win.lock(LockType::Shared, rank, Assert::empty(), |e| {
            e.get_now(&mut got, rank, 0)
        }),
        "lock after the closing fence",
    )
    .unwrap();
    t.eq(got, [10, 100], "the values under a lock");
}

/// Rank 0 alone tries a passive epoch on itself between two fences: refused, so its next fence
/// matches everyone else's.
fn one_rank_alone_between_fences(comm: &Communicator<'_>, t: &mut Checks) {
    let (next, _) = ring(comm);
    let rank = comm.rank();
    let win = t.okay(Window::<i64>::allocate(comm, 2), "allocate");
    t.okay(
        win.fence(Assert::empty(), |e| e.put(&[10i64], next, 0)),
        "first fence",
    )
    .unwrap();
    if rank == 0 {
        t.err(
            win.lock(LockType::Exclusive, 0, Assert::empty(), |e| {
                e.put_now(&[7i64], 0, 0)
            }),
            |e| matches!(e.kind(), ErrorKind::EpochMisuse { .. }),
            "rank 0's lock between fences",
        );
    }
    second_and_closing_fence(&win, next, rank, t);
}

/// After a first fence in which every rank put 10 into slot 0 of the next: a second fence
/// putting 100 into slot 1, and a closing one (`NOSUCCEED`) reading this rank's two slots,
/// which must hold both puts (a rank whose fences went out of step reads `[10, 0]`, then the
/// job hangs). Returns the slots.
fn second_and_closing_fence(
    win: &Window<'_, i64>,
    next: i32,
    rank: i32,
    t: &mut Checks,
) -> [i64; 2] {
    t.okay(
        win.fence(Assert::empty(), |e| e.put(&[100i64], next, 1)),
        "second fence",
    )
    .unwrap();
    let mut got = [0i64; 2];
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.get(&mut got, rank, 0)),
        "closing fence",
    )
    .unwrap();
    t.eq(got, [10, 100], "both puts arrived, in step");
    got
}

/// A length only rank 0's window cannot hold: every rank gets the error, none waits in MPI.
fn sizes_one_rank_refuses(comm: &Communicator<'_>, t: &mut Checks) {
    let len = if comm.rank() == 0 { usize::MAX / 2 } else { 1 };
    t.err(
        Window::<u64>::allocate(comm, len),
        |e| matches!(e.kind(), ErrorKind::CountOverflow { .. }),
        "allocate with one rank's length too large",
    );
    let win = t.okay(Window::<u64>::allocate(comm, 2), "allocate afterwards");
    t.eq(win.len_of(0), Some(2), "the window afterwards");
}

/// Lengths whose sum with the control block does not fit an `MPI_Aint`, on every rank, and
/// one rank's length alone too large: every rank gets the same error, and a window works
/// afterwards.
fn shared_sizes_one_rank_refuses(node: &Communicator<'_>, t: &mut Checks) {
    let refused = |e: &Error| {
        matches!(
            e.kind(),
            ErrorKind::InvalidArgument { .. } | ErrorKind::CountOverflow { .. }
        )
    };
    t.err(
        SharedWindow::<u64>::allocate(node, isize::MAX as usize / 8),
        refused,
        "a shared window of isize::MAX / 8 values on every rank",
    );
    let len = if node.rank() + 1 == node.size() {
        usize::MAX / 4
    } else {
        1
    };
    t.err(
        SharedWindow::<u64>::allocate(node, len),
        refused,
        "a shared window with the last rank's length too large",
    );
    let mut win = t.okay(
        SharedWindow::<u64>::allocate(node, 2),
        "allocate afterwards",
    );
    t.okay(win.write(), "write epoch afterwards").local()[0] = 5;
    let read = t.okay(win.read(), "read epoch afterwards");
    t.eq(
        read.segment(0).map(|s| s[0]),
        Some(5),
        "rank 0's value afterwards",
    );
}

/// A shared window's epoch entered from a thread the level refuses changes nothing: the
/// window stays in step, and the next epoch from the right thread works on every rank.
fn refused_thread_in_a_shared_epoch(node: &Communicator<'_>, t: &mut Checks) {
    let mut win = t.okay(SharedWindow::<u64>::allocate(node, 1), "allocate");
    let before = win.epochs();
    let refused = std::thread::scope(|s| s.spawn(|| win.read().map(drop)).join().expect("joined"));
    t.err(
        refused,
        |e| matches!(e.kind(), ErrorKind::WrongThread { .. }),
        "read from a refused thread",
    );
    t.eq(win.epochs(), before, "no epoch counted for the refused one");
    t.okay(win.write(), "write from the initialising thread")
        .local()[0] = 9;
    let read = t.okay(win.read(), "read from the initialising thread");
    t.eq(read.local(), &[9u64][..], "the window in step");
}
