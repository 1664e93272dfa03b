//! Groups: incl, excl, range_incl/range_excl, set operations, translate_ranks (PROC_NULL too),
//! compare, and bad ranks and ranges.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Comparison, Error, Mpi, ProcNull};

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
        |e| matches!(e.kind(), ErrorKind::InvalidRank { rank, .. } if *rank == size),
        "incl out of range",
    );
    t.err(
        all.excl(&[-1]),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "excl negative",
    );
    t.err(
        all.incl(&[0, 0]),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "incl duplicate",
    );
    t.err(
        all.translate_ranks(&[size + 3], &rev),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "translate bad",
    );
    // MPI_PROC_NULL translates to itself (MPI-4.0 §7.3.1), beside real ranks.
    t.eq_ok(
        all.translate_ranks(&[ProcNull::RANK, 0], &rev),
        vec![Some(ProcNull::RANK), Some(size - 1)],
        "PROC_NULL translates to PROC_NULL",
    );

    // Ranges: the even ranks, the odd ranks backwards, and their complements.
    let last = size - 1;
    let even = t.okay(all.range_incl(&[(0, last, 2)]), "range_incl evens");
    let evens: Vec<i32> = (0..size).step_by(2).collect();
    let by_list = t.okay(all.incl(&evens), "incl evens");
    t.eq_ok(
        even.compare(&by_list),
        Comparison::Identical,
        "range_incl (0, last, 2) = incl of the even ranks",
    );
    if size > 1 {
        let top_odd = if last % 2 == 1 { last } else { last - 1 };
        let odd_back = t.okay(all.range_incl(&[(top_odd, 1, -2)]), "range_incl odds back");
        let odds: Vec<i32> = (1..size).step_by(2).rev().collect();
        let by_list = t.okay(all.incl(&odds), "incl odds back");
        t.eq_ok(
            odd_back.compare(&by_list),
            Comparison::Identical,
            "negative stride, in order",
        );
        let both = t.okay(
            all.range_incl(&[(0, last, 2), (top_odd, 1, -2)]),
            "two ranges",
        );
        t.eq_ok(both.size(), size, "two ranges cover every rank");
    }
    let not_even = t.okay(all.range_excl(&[(0, last, 2)]), "range_excl evens");
    let by_list = t.okay(all.excl(&evens), "excl evens");
    t.eq_ok(
        not_even.compare(&by_list),
        Comparison::Identical,
        "range_excl = excl",
    );
    let bad_range = |e: &Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    t.err(all.range_incl(&[(0, last, 0)]), bad_range, "zero stride");
    t.err(
        all.range_incl(&[(0, 0, 1), (0, 0, 1)]),
        bad_range,
        "a rank twice",
    );
    if size > 1 {
        t.err(
            all.range_excl(&[(last, 0, 1)]),
            bad_range,
            "a range running away",
        );
    }
    t.err(
        all.range_incl(&[(0, size, 1)]),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { rank, .. } if *rank == size),
        "a range past the group",
    );
    t.err(
        all.range_incl(&[(0, i32::MAX, 1)]),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "a huge range stops at the group's size",
    );
    t.okay(rev.free(), "free");
}
