//! Shared-memory windows: leader-only and uneven segments, contiguous and not, epochs in
//! sequence, atomics, out-of-step epochs detected on every rank, bad input, `Info`, and the
//! memory a node really uses (PSS) against replication.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::window::SharedWindow;
use ferrompi::{Communicator, Equivalence, Error, Info, Mpi, Sum};

/// The sum of one value over the communicator.
pub fn sum_over<T: Equivalence + Default + ferrompi::op::Arithmetic>(
    comm: &Communicator<'_>,
    x: T,
) -> ferrompi::Result<T> {
    let mut out = [T::default()];
    comm.allreduce(&[x], &mut out, Sum).map(|()| out[0])
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    info(mpi, t);
    let node = t.okay(mpi.world().split_shared(0), "split_shared");
    t.ok(
        node.is_known_node_local(),
        "split_shared is known node-local",
    );
    leader_only(&node, t);
    uneven(&node, None, t);
    let noncontig = t.okay(
        Info::with(mpi, &[("alloc_shared_noncontig", "true")]),
        "info",
    );
    uneven(&node, Some(&noncontig), t);
    rounds(&node, t);
    atomics(&node, t);
    out_of_step(&node, t);
    progress_while_waiting(&node, t);
    bad_input(mpi, &node, t);
    memory(&node, t);
}

fn info(mpi: &Mpi, t: &mut Checks) {
    let mut info = t.okay(Info::new(mpi), "Info::new");
    t.eq_ok(info.is_empty(), true, "new info is empty");
    t.okay(info.set("same_size", "true"), "set");
    t.okay(info.set("accumulate_ops", "same_op"), "set");
    t.eq_ok(info.get("same_size"), Some("true".into()), "get");
    t.eq_ok(info.get("absent"), None, "get absent");
    t.eq_ok(info.len(), 2, "len");
    let dup = t.okay(info.dup(), "dup");
    t.eq_ok(info.delete("same_size"), true, "delete");
    t.eq_ok(info.delete("same_size"), false, "delete again");
    t.eq_ok(
        dup.entries(),
        vec![
            ("same_size".into(), "true".into()),
            ("accumulate_ops".into(), "same_op".into()),
        ],
        "entries of the dup",
    );
    let long = "k".repeat(4096);
    for (result, what) in [
        (info.set("", "x"), "empty key"),
        (info.set("a\0b", "x"), "NUL in key"),
        (info.set(&long, "x"), "long key"),
        (info.set("k", &long), "long value"),
    ] {
        t.err(
            result,
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            what,
        );
    }
}

/// The leader stores a table, every rank reads it, through one slice and per segment.
fn leader_only(node: &Communicator<'_>, t: &mut Checks) {
    const N: usize = 10_000;
    let len = if node.rank() == 0 { N } else { 0 };
    let mut table = t.okay(SharedWindow::<f64>::allocate(node, len), "allocate");
    t.eq(table.len(), N, "total length");
    t.eq(table.local_len(), len, "local length");
    {
        let read = t.okay(table.read(), "read epoch");
        t.ok(
            read.segment(0).unwrap().iter().all(|&x| x == 0.0),
            "zeroed at allocation",
        );
    }
    {
        let mut write = t.okay(table.write(), "write epoch");
        for (i, x) in write.local().iter_mut().enumerate() {
            *x = i as f64 * 0.5;
        }
    }
    let read = t.okay(table.read(), "read epoch");
    let all = read.as_slice().expect("contiguous by default");
    t.eq(all.len(), N, "whole window length");
    let sum: f64 = all.iter().sum();
    t.eq(
        sum,
        (0..N).map(|i| i as f64 * 0.5).sum(),
        "sum over the leader's table",
    );
    t.eq(
        read.segment(node.size()),
        None,
        "segment past the last rank",
    );
    for r in 1..node.size() {
        t.eq(read.segment(r).map(<[f64]>::len), Some(0), "empty segment");
    }
}

/// Uneven segments (some empty), each rank writing its own, everyone reading all.
fn uneven(node: &Communicator<'_>, info: Option<&Info<'_>>, t: &mut Checks) {
    let lens = |r: i32| [3usize, 0, 5, 1][r as usize % 4] + r as usize / 4;
    let mut win = t.okay(
        SharedWindow::<[u32; 2]>::allocate_with_info(node, lens(node.rank()), info),
        "allocate uneven",
    );
    {
        let mut write = t.okay(win.write(), "write epoch");
        let rank = node.rank() as u32;
        for (i, x) in write.local().iter_mut().enumerate() {
            *x = [rank, i as u32];
        }
    }
    let contiguous = win.is_contiguous();
    let read = t.okay(win.read(), "read epoch");
    let mut expected = Vec::new();
    for r in 0..node.size() {
        let want: Vec<[u32; 2]> = (0..lens(r)).map(|i| [r as u32, i as u32]).collect();
        t.eq(read.segment(r).unwrap(), &want[..], format!("segment {r}"));
        expected.extend(want);
    }
    t.eq(read.segments().count(), node.size() as usize, "segments()");
    match read.as_slice() {
        Some(all) => t.eq(all, &expected[..], "whole window"),
        None => t.ok(
            !contiguous && info.is_some(),
            "only noncontig windows lack a slice",
        ),
    }
    if info.is_none() {
        t.ok(contiguous, "default allocation is contiguous");
    }
}

/// Write and read epochs in turn: every read sees the round's writes.
fn rounds(node: &Communicator<'_>, t: &mut Checks) {
    let mut win = t.okay(SharedWindow::<u64>::allocate(node, 64), "allocate");
    for round in 1..=6u64 {
        {
            let mut w = t.okay(win.write(), "write epoch");
            w.local().fill(round * 1000 + node.rank() as u64);
        }
        let read = t.okay(win.read(), "read epoch");
        let ok = (0..node.size()).all(|r| {
            read.segment(r)
                .unwrap()
                .iter()
                .all(|&x| x == round * 1000 + r as u64)
        });
        t.ok(ok, format!("round {round} sees every rank's writes"));
    }
    t.eq(win.epochs(), 12, "epochs entered");
    t.okay(win.free(), "free");
}

fn atomics(node: &Communicator<'_>, t: &mut Checks) {
    let mut win = t.okay(SharedWindow::<i64>::allocate(node, 2), "allocate");
    {
        let a = t.okay(win.atomic(), "atomic epoch");
        for _ in 0..10 {
            t.okay(a.fetch_and_op(1, 0, 0, Sum), "fetch_and_op");
        }
        let won = t.okay(a.compare_and_swap(node.rank() as i64 + 1, 0, 0, 1), "cas") == 0;
        let wins = t.okay(sum_over(node, i32::from(won)), "count wins");
        t.eq(wins, 1, "exactly one compare_and_swap wins");
        t.err(
            a.load(node.size(), 0),
            |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
            "bad rank",
        );
        t.err(
            a.load(0, 2),
            |e| matches!(e.kind(), ErrorKind::OutOfBounds { .. }),
            "index past end",
        );
    }
    {
        let a = t.okay(win.atomic(), "atomic epoch");
        t.eq_ok(
            a.load(0, 0),
            10 * i64::from(node.size()),
            "atomic load of the counter",
        );
    }
    let read = t.okay(win.read(), "read epoch");
    let seg = read.segment(0).unwrap();
    t.eq(
        seg[0],
        10 * i64::from(node.size()),
        "counter after the atomics",
    );
    t.ok(
        (1..=i64::from(node.size())).contains(&seg[1]),
        "the winner's mark",
    );
}

/// Rank 0 writes while the others read: every rank gets EpochMismatch and nobody races;
/// the window then refuses every epoch.
fn out_of_step(node: &Communicator<'_>, t: &mut Checks) {
    let mut win = t.okay(SharedWindow::<u8>::allocate(node, 16), "allocate");
    t.okay(win.read().map(drop), "agreed read epoch");
    if node.size() == 1 {
        return;
    }
    let mismatch = |e: &Error| matches!(e.kind(), ErrorKind::EpochMismatch { .. });
    if node.rank() == 0 {
        t.err(win.write().map(drop), mismatch, "write against reads");
    } else {
        t.err(win.read().map(drop), mismatch, "read against a write");
    }
    t.err(
        win.read().map(drop),
        mismatch,
        "the window refuses later epochs",
    );
}

/// Rank 1 has a receive pending and waits in an epoch; rank 0 reaches the epoch only after a
/// large (rendezvous) send to it has completed. Entering the epoch must drive MPI's progress,
/// as MPI_Barrier would, or this deadlocks.
fn progress_while_waiting(node: &Communicator<'_>, t: &mut Checks) {
    let mut win = t.okay(SharedWindow::<u8>::allocate(node, 8), "allocate");
    let data = vec![7u8; 8 << 20];
    let mut got = vec![0u8; if node.rank() == 1 { 8 << 20 } else { 0 }];
    let result = ferrompi::scope(|s| -> ferrompi::Result<()> {
        let pending = if node.rank() == 1 {
            Some(node.irecv(s, &mut got, 0, 77)?)
        } else {
            None
        };
        if node.rank() == 0 && node.size() > 1 {
            node.send(&data, 1, 77)?;
        }
        win.read().map(drop)?;
        if let Some(request) = pending {
            request.wait()?;
        }
        Ok(())
    });
    t.okay(
        result,
        "an epoch while a rendezvous send waits on this rank",
    );
    if node.rank() == 1 {
        t.ok(got.iter().all(|&b| b == 7), "the message arrived");
    }
}

fn bad_input(mpi: &Mpi, node: &Communicator<'_>, t: &mut Checks) {
    t.err(
        SharedWindow::<()>::allocate(node, 4),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "zero-sized element type",
    );
    // The world is not known to be one node: checked, and here it is one.
    let world = mpi.world();
    let mut win = t.okay(
        SharedWindow::<u16>::allocate(&world, 1),
        "allocate on world",
    );
    t.okay(win.read().map(drop), "read epoch on world");
    t.eq(win.len(), world.size() as usize, "one value per rank");
    // A huge request fails cleanly in MPI, on every rank.
    t.ok(
        SharedWindow::<u64>::allocate(node, usize::MAX / 4).is_err(),
        "impossible size",
    );
}

/// Proportional set size of this process, in bytes.
fn pss() -> u64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// N ranks sharing D bytes use about D per node; replicated they use N × D.
fn memory(node: &Communicator<'_>, t: &mut Checks) {
    const D: usize = 32 << 20;
    let n = node.size() as u64;
    let before = pss();
    let len = if node.rank() == 0 { D / 8 } else { 0 };
    let mut win = t.okay(SharedWindow::<u64>::allocate(node, len), "allocate 32 MiB");
    {
        let mut w = t.okay(win.write(), "write");
        for (i, x) in w.local().iter_mut().enumerate() {
            *x = i as u64;
        }
    }
    let sum: u64 = t.okay(win.read(), "read").as_slice().unwrap().iter().sum();
    t.eq(
        sum,
        (D as u64 / 8) * (D as u64 / 8 - 1) / 2,
        "everyone reads the table",
    );
    t.okay(node.barrier(), "barrier");
    let shared = pss().saturating_sub(before);
    let shared_total = t.okay(sum_over(node, shared), "sum of PSS");
    drop(win);
    let before = pss();
    let replica: Vec<u64> = (0..D as u64 / 8).collect();
    let replicated = pss().saturating_sub(before);
    let replicated_total = t.okay(sum_over(node, replicated), "sum of PSS");
    std::hint::black_box(&replica);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    if node.rank() == 0 {
        println!(
            "memory: {n} ranks sharing {} MiB use {:.1} MiB of PSS; replicated: {:.1} MiB",
            D >> 20,
            mib(shared_total),
            mib(replicated_total)
        );
    }
    t.ok(
        shared_total < D as u64 * 5 / 4,
        format!(
            "shared: {:.1} MiB for 32 MiB on {n} ranks",
            mib(shared_total)
        ),
    );
    t.ok(
        replicated_total > (D as u64 * n) * 9 / 10,
        format!("replicated: {:.1} MiB", mib(replicated_total)),
    );
}
