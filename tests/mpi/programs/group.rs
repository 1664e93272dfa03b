//! Groups: incl, excl, set operations, translate_ranks, compare, and bad ranks.

use crate::checks::Checks;
use ferrompi::{Comparison, Error, Mpi};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let all = t.okay(world.group(), "group");
    t.eq_ok(all.size(), size, "group size");
    t.eq_ok(all.rank(), Some(rank), "group rank");

    let reversed: Vec<i32> = (0..size).rev().collect();
    let rev = t.okay(all.incl(&reversed), "incl reversed");
    t.eq_ok(rev.rank(), Some(size - 1 - rank), "rank in reversed group");
    let want = if size == 1 {
        Comparison::Identical
    } else {
        Comparison::Similar
    };
    t.eq_ok(all.compare(&rev), want, "reversed is similar");
    t.eq_ok(all.compare(&all), Comparison::Identical, "identical");
    let translated = t.okay(
        all.translate_ranks(&(0..size).collect::<Vec<_>>(), &rev),
        "translate",
    );
    let expect: Vec<Option<i32>> = (0..size).map(|r| Some(size - 1 - r)).collect();
    t.eq(translated, expect, "translate into reversed");

    let without_first = t.okay(all.excl(&[0]), "excl 0");
    t.eq_ok(without_first.size(), size - 1, "excl size");
    t.eq_ok(
        without_first.rank(),
        if rank == 0 { None } else { Some(rank - 1) },
        "excl rank",
    );
    let back = t.okay(
        all.translate_ranks(&[0], &without_first),
        "translate missing",
    );
    t.eq(back, vec![None], "rank 0 is not in the group without it");

    let first = t.okay(all.incl(&[0]), "incl 0");
    let union = t.okay(without_first.union(&first), "union");
    t.eq_ok(union.size(), size, "union size");
    let inter = t.okay(without_first.intersection(&first), "intersection");
    t.eq_ok(inter.size(), 0, "intersection is empty");
    let diff = t.okay(all.difference(&first), "difference");
    t.eq_ok(
        diff.compare(&without_first),
        Comparison::Identical,
        "difference = excl",
    );
    let empty = t.okay(all.incl(&[]), "incl nothing");
    t.eq_ok(empty.size(), 0, "empty group");
    t.okay(empty.free(), "free the empty group");

    t.err(
        all.incl(&[size]),
        |e| matches!(e, Error::InvalidRank { rank, .. } if *rank == size),
        "incl out of range",
    );
    t.err(
        all.excl(&[-1]),
        |e| matches!(e, Error::InvalidRank { .. }),
        "excl negative",
    );
    t.err(
        all.incl(&[0, 0]),
        |e| matches!(e, Error::InvalidArgument { .. }),
        "incl duplicate",
    );
    t.err(
        all.translate_ranks(&[size + 3], &rev),
        |e| matches!(e, Error::InvalidRank { .. }),
        "translate bad",
    );
    t.okay(rev.free(), "free");
}
