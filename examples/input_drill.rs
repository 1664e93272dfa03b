//! The program `tools/drills.sh inputs` runs: generated bad input for the public operations,
//! every call of which must return an `Err` of the right kind, and leave the communicator
//! usable. The cases come from proptest strategies driven by one seed on every rank, so that
//! all ranks make the same calls: a wrong rank, root or tag; buffers whose lengths disagree; a
//! partition of the wrong size or whose counts overflow; a group of ranks out of range or
//! repeated; a window access past a segment or to a missing rank, or an epoch opened inside
//! another (a state, not an argument, that MPI would call erroneous); and what only the root can
//! see (a `gather`/`gatherv` receive buffer or a `scatterv` send buffer too short), which the
//! root alone calls: the others would be left in the collective (the watchdog's case).
//!
//! `FERROMPI_INPUT_CASES` (10 000) and `FERROMPI_INPUT_SEED` (1) choose the cases. Every 64
//! cases, and at the end, the ranks check in one `allreduce` that each ran the same cases and
//! the world still reduces. Rank 0 prints the count of each kind; a call that succeeded, or
//! failed with an unexpected kind, is an `Err` from `main`.
//!
//! ```sh
//! FERROMPI_INPUT_CASES=1000 mpirun -n 3 target/debug/examples/input_drill
//! ```

mod drill;

use ferrompi::{Communicator, Error, ErrorKind, Mpi, Partition, Sum, Window, window::Assert};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeMap;

/// One bad call.
#[derive(Debug, Clone)]
enum Case {
    SendRank(i32),
    SendTag(i32),
    RecvRank(i32),
    RecvTag(i32),
    IsendRank(i32),
    IrecvTag(i32),
    SendrecvRank(i32),
    BcastRoot(i32),
    ReduceRoot(i32),
    GatherRoot(i32),
    ScatterRoot(i32),
    AllreduceLengths(usize, usize),
    ScanLengths(usize, usize),
    AlltoallLengths(usize, usize),
    GathervPartitionSize(usize),
    PartitionOverflow(usize),
    GroupRanks(Vec<i32>),
    PutPast(usize, usize),
    GetTarget(i32),
    /// A second epoch opened on the window inside the first (its state, not an argument).
    NestedEpoch(bool),
    /// Only the root can see these: the root alone calls.
    GatherRootShort(i32, usize),
    GathervRootShort(i32, usize),
    ScattervRootShort(i32, usize),
}

impl Case {
    /// The kind of case, for the counts.
    fn name(&self) -> &'static str {
        match self {
            Case::SendRank(_) => "send: rank",
            Case::SendTag(_) => "send: tag",
            Case::RecvRank(_) => "recv: rank",
            Case::RecvTag(_) => "recv: tag",
            Case::IsendRank(_) => "isend: rank",
            Case::IrecvTag(_) => "irecv: tag",
            Case::SendrecvRank(_) => "sendrecv: rank",
            Case::BcastRoot(_) => "bcast: root",
            Case::ReduceRoot(_) => "reduce: root",
            Case::GatherRoot(_) => "gather: root",
            Case::ScatterRoot(_) => "scatter: root",
            Case::AllreduceLengths(..) => "allreduce: lengths",
            Case::ScanLengths(..) => "scan: lengths",
            Case::AlltoallLengths(..) => "alltoall: lengths",
            Case::GathervPartitionSize(_) => "gatherv: partition size",
            Case::PartitionOverflow(_) => "partition: counts overflow",
            Case::GroupRanks(_) => "group incl: ranks",
            Case::PutPast(..) => "put: past the segment",
            Case::GetTarget(_) => "get: target rank",
            Case::NestedEpoch(_) => "window: epoch inside an epoch",
            Case::GatherRootShort(..) => "gather: root's buffer (root only)",
            Case::GathervRootShort(..) => "gatherv: root's buffer (root only)",
            Case::ScattervRootShort(..) => "scatterv: root's buffer (root only)",
        }
    }

    /// The root that alone makes the call, for what only the root can see.
    fn only_root(&self) -> Option<i32> {
        match self {
            Case::GatherRootShort(root, _)
            | Case::GathervRootShort(root, _)
            | Case::ScattervRootShort(root, _) => Some(*root),
            _ => None,
        }
    }

    /// Whether `kind` is the error this case must give.
    fn expects(&self, kind: &ErrorKind) -> bool {
        match self {
            Case::SendRank(_)
            | Case::RecvRank(_)
            | Case::IsendRank(_)
            | Case::SendrecvRank(_)
            | Case::BcastRoot(_)
            | Case::ReduceRoot(_)
            | Case::GatherRoot(_)
            | Case::ScatterRoot(_)
            | Case::GetTarget(_) => matches!(kind, ErrorKind::InvalidRank { .. }),
            Case::SendTag(_) | Case::RecvTag(_) | Case::IrecvTag(_) => {
                matches!(kind, ErrorKind::InvalidTag { .. })
            }
            Case::AllreduceLengths(..)
            | Case::ScanLengths(..)
            | Case::GatherRootShort(..)
            | Case::GathervRootShort(..)
            | Case::ScattervRootShort(..) => matches!(kind, ErrorKind::BufferSize { .. }),
            Case::AlltoallLengths(..) | Case::GathervPartitionSize(_) => matches!(
                kind,
                ErrorKind::InvalidArgument { .. } | ErrorKind::BufferSize { .. }
            ),
            Case::PartitionOverflow(_) => matches!(
                kind,
                ErrorKind::CountOverflow { .. } | ErrorKind::InvalidArgument { .. }
            ),
            Case::GroupRanks(_) => matches!(
                kind,
                ErrorKind::InvalidRank { .. } | ErrorKind::InvalidArgument { .. }
            ),
            Case::PutPast(..) => matches!(kind, ErrorKind::OutOfBounds { .. }),
            Case::NestedEpoch(_) => matches!(kind, ErrorKind::EpochMisuse { .. }),
        }
    }
}

/// A rank outside `0..size`.
fn bad_rank(size: i32) -> BoxedStrategy<i32> {
    prop_oneof![size..=i32::MAX, i32::MIN..0].boxed()
}

/// A root, any of `0..size`.
fn root(size: i32) -> BoxedStrategy<i32> {
    (0..size).boxed()
}

/// Every kind of case, for a world of `size` with tags up to `tag_ub`.
fn cases(size: i32, tag_ub: i32) -> BoxedStrategy<Case> {
    let bad_tag = if tag_ub < i32::MAX {
        prop_oneof![i32::MIN..0, tag_ub + 1..=i32::MAX].boxed()
    } else {
        (i32::MIN..0).boxed()
    };
    let n = size as usize;
    let unequal = (0usize..64, 0usize..64).prop_filter("lengths differ", |(a, b)| a != b);
    prop_oneof![
        bad_rank(size).prop_map(Case::SendRank),
        bad_tag.clone().prop_map(Case::SendTag),
        bad_rank(size).prop_map(Case::RecvRank),
        bad_tag.clone().prop_map(Case::RecvTag),
        bad_rank(size).prop_map(Case::IsendRank),
        bad_tag.prop_map(Case::IrecvTag),
        bad_rank(size).prop_map(Case::SendrecvRank),
        bad_rank(size).prop_map(Case::BcastRoot),
        bad_rank(size).prop_map(Case::ReduceRoot),
        bad_rank(size).prop_map(Case::GatherRoot),
        bad_rank(size).prop_map(Case::ScatterRoot),
        unequal
            .clone()
            .prop_map(|(a, b)| Case::AllreduceLengths(a, b)),
        unequal.prop_map(|(a, b)| Case::ScanLengths(a, b)),
        (0usize..256, 0usize..256)
            .prop_filter("not whole blocks, or lengths differ", move |(a, b)| {
                a % n != 0 || a != b
            })
            .prop_map(|(a, b)| Case::AlltoallLengths(a, b)),
        (0usize..2 * n + 2)
            .prop_filter("not one count per rank", move |l| *l != n)
            .prop_map(Case::GathervPartitionSize),
        (2usize..8).prop_map(Case::PartitionOverflow),
        proptest::collection::vec(-3 * size..3 * size, 1..8)
            .prop_filter("out of range or repeated", move |ranks| {
                let mut seen = std::collections::BTreeSet::new();
                ranks
                    .iter()
                    .any(|r| !(0..size).contains(r) || !seen.insert(*r))
            })
            .prop_map(Case::GroupRanks),
        (0usize..64, 1usize..64)
            .prop_filter("past the segment", |(i, l)| i + l > WINDOW_LEN)
            .prop_map(|(i, l)| Case::PutPast(i, l)),
        bad_rank(size).prop_map(Case::GetTarget),
        any::<bool>().prop_map(Case::NestedEpoch),
        (root(size), 1usize..8).prop_map(|(r, short)| Case::GatherRootShort(r, short)),
        (root(size), 1usize..8).prop_map(|(r, short)| Case::GathervRootShort(r, short)),
        (root(size), 1usize..8).prop_map(|(r, short)| Case::ScattervRootShort(r, short)),
    ]
    .boxed()
}

/// Elements per rank of the drill's window.
const WINDOW_LEN: usize = 16;

/// Makes the call of `case`; returns what it returned.
fn call(case: &Case, world: &Communicator<'_>, window: &Window<'_, u64>) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let next = (rank + 1) % size;
    let mut one = [0u64];
    match case {
        Case::SendRank(dest) => world.send(&[1u64], *dest, 0),
        Case::SendTag(tag) => world.send(&[1u64], next, *tag),
        Case::RecvRank(source) => world.recv(&mut one, *source, 0).map(drop),
        Case::RecvTag(tag) => world.recv(&mut one, next, *tag).map(drop),
        Case::IsendRank(dest) => {
            ferrompi::scope(|s| world.isend(s, &[1u64], *dest, 0)?.wait()).map(drop)
        }
        Case::IrecvTag(tag) => {
            ferrompi::scope(|s| world.irecv(s, &mut one, next, *tag)?.wait()).map(drop)
        }
        Case::SendrecvRank(peer) => {
            let mut got = [0u64];
            world
                .sendrecv(&[1u64], *peer, 0, &mut got, next, 0)
                .map(drop)
        }
        Case::BcastRoot(root) => world.bcast(&mut one, *root),
        Case::ReduceRoot(root) => world.reduce(&[1u64], &mut one, Sum, *root),
        Case::GatherRoot(root) => world.gather(&[1u64], &mut vec![0; n], *root),
        Case::ScatterRoot(root) => world.scatter(&vec![0u64; n], &mut one, *root),
        Case::AllreduceLengths(a, b) => world.allreduce(&vec![1u64; *a], &mut vec![0; *b], Sum),
        Case::ScanLengths(a, b) => world.scan(&vec![1u64; *a], &mut vec![0; *b], Sum),
        Case::AlltoallLengths(a, b) => world.alltoall(&vec![1u64; *a], &mut vec![0; *b]),
        Case::GathervPartitionSize(len) => {
            let blocks = Partition::<u64>::from_counts(&vec![1; *len])?;
            world.gatherv(&[1u64], &mut vec![0; *len], &blocks, 0)
        }
        Case::PartitionOverflow(parts) => {
            Partition::<u64>::from_counts(&vec![usize::MAX / 2; *parts]).map(drop)
        }
        Case::GroupRanks(ranks) => world.group()?.incl(ranks).map(drop),
        Case::PutPast(index, len) => window
            .lock_all(Assert::empty(), |epoch| {
                epoch.put_now(&vec![1u64; *len], next, *index)
            })
            .and_then(|r| r),
        Case::GetTarget(target) => window
            .lock_all(Assert::empty(), |epoch| epoch.get_now(&mut one, *target, 0))
            .and_then(|r| r),
        Case::NestedEpoch(fence) => window
            .lock_all(Assert::empty(), |_| {
                if *fence {
                    window.fence(Assert::empty(), |_| ()).map(drop)
                } else {
                    window.lock_all(Assert::empty(), |_| ()).map(drop)
                }
            })
            .and_then(|r| r),
        Case::GatherRootShort(root, short) => {
            world.gather(&[1u64], &mut vec![0; n.saturating_sub(*short)], *root)
        }
        Case::GathervRootShort(root, short) => {
            let blocks = Partition::<u64>::from_counts(&vec![2; n])?;
            world.gatherv(
                &[1u64; 2],
                &mut vec![0; 2 * n - short.min(&(2 * n))],
                &blocks,
                *root,
            )
        }
        Case::ScattervRootShort(root, short) => {
            let blocks = Partition::<u64>::from_counts(&vec![2; n])?;
            let send = vec![0u64; 2 * n - short.min(&(2 * n))];
            world.scatterv(&send, &mut [0u64; 2], &blocks, *root)
        }
    }
}

fn main() -> Result<(), Error> {
    let count: u64 = drill::setting("FERROMPI_INPUT_CASES", 10_000);
    let seed: u64 = drill::setting("FERROMPI_INPUT_SEED", 1);
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let window = Window::<u64>::allocate(&world, WINDOW_LEN)?;
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &key),
    );
    let strategy = cases(size, mpi.tag_ub());
    // Per kind: cases, the expected error, another error, no error.
    let mut counts: BTreeMap<&'static str, [u64; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for i in 0..count {
        let case = strategy
            .new_tree(&mut runner)
            .map_err(|e| drill::failed("input_drill", format!("no case: {e}")))?
            .current();
        let tally = counts.entry(case.name()).or_default();
        tally[0] += 1;
        if case.only_root().is_none_or(|root| root == rank) {
            match call(&case, &world, &window) {
                Err(e) if case.expects(e.kind()) => tally[1] += 1,
                Err(e) => {
                    tally[2] += 1;
                    failures.push(format!("{case:?}: {e}"));
                }
                Ok(()) => {
                    tally[3] += 1;
                    failures.push(format!("{case:?}: succeeded"));
                }
            }
        } else {
            tally[1] += 1; // not this rank's call
        }
        if i % 64 == 63 || i + 1 == count {
            // Every rank made the same calls, and the world still reduces.
            let mut sums = [0u64; 2];
            world.allreduce(&[i, 1], &mut sums, Sum)?;
            if sums != [i * size as u64, size as u64] {
                return Err(drill::failed(
                    "input_drill",
                    format!("after case {i}: the ranks disagree: {sums:?}"),
                ));
            }
        }
    }
    window.free()?;
    if rank == 0 {
        println!("{count} generated bad calls at {size} ranks (seed {seed}):");
        for (name, [cases, expected, other, ok]) in &counts {
            println!(
                "  {name:<36} {cases:>6} cases: {expected:>6} the expected error, {other} another, {ok} succeeded"
            );
        }
    }
    let mut bad = [0u64];
    world.allreduce(&[failures.len() as u64], &mut bad, Sum)?;
    for failure in failures.iter().take(5) {
        eprintln!("rank {rank}: {failure}");
    }
    if bad[0] != 0 {
        return Err(drill::failed(
            "input_drill",
            format!("{} calls did not give the expected error", bad[0]),
        ));
    }
    Ok(())
}
