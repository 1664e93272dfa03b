//! The comparison's rows for windows: shared-window allocation, entering a read epoch,
//! the 64 MiB sum through a read epoch (against C, and against a private `Vec`), and RMA
//! put/get under `lock_all` with the `ffi` control.

use super::*;

const SHARED: [usize; 3] = [4096, 1 << 20, 64 << 20];
const RMA: [usize; 2] = [8, 1 << 20];

/// The same sum on both sides of the shared-window row, kept out of line so it is the same code.
#[inline(never)]
fn sum(values: &[f64]) -> f64 {
    values.iter().sum()
}

/// Shared windows (allocation, entering an epoch, reading 64 MiB through a read epoch) and
/// RMA put/get under lock_all.
pub(super) fn windows<'a>(
    bench: &mut MpiBench<'a>,
    rows: &mut Vec<Row>,
    world: &'a Communicator<'a>,
    node: &'a Communicator<'a>,
) {
    let leader = node.rank() == 0;
    for bytes in SHARED {
        bench.add("shared_alloc", "ferrompi", bytes, move |iters| {
            timed(iters, || {
                let len = if leader { bytes } else { 0 };
                drop(SharedWindow::<u8>::allocate(node, len).expect("allocate_shared"));
            })
        });
        bench.add("shared_alloc", "c", bytes, move |iters| {
            // SAFETY: a valid communicator; the C side allocates and frees its own windows.
            seconds(unsafe {
                ferrompi_c_shared_alloc(iters as c_long, node.as_raw(), bytes as ffi::MPI_Aint)
            })
        });
        rows.push(Row {
            group: "shared_alloc",
            what: "SharedWindow::allocate (leader holds all)",
            bytes,
            target: 1.10,
        });
    }
    let mut win = SharedWindow::<u8>::allocate(node, 64).expect("allocate_shared");
    bench.add("shared_epoch", "ferrompi", 0, move |iters| {
        timed(iters, || win.read().map(|_| ()).expect("read epoch"))
    });
    bench.add("shared_epoch", "c", 0, move |iters| {
        // SAFETY: a valid communicator.
        seconds(unsafe { ferrompi_c_shared_epoch(iters as c_long, node.as_raw()) })
    });
    rows.push(Row {
        group: "shared_epoch",
        what: "enter a read epoch",
        bytes: 0,
        target: 1.02,
    });
    let table = 64 << 20;
    let len = if leader { table / 8 } else { 0 };
    let mut scenarios = SharedWindow::<f64>::allocate(node, len).expect("allocate_shared");
    {
        let mut w = scenarios.write().expect("write epoch");
        w.local()
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as f64);
    }
    // The leader's segment, read by all: C reads the same memory through the raw pointer, its
    // closure holding the window too (the A/A control drops the ferrompi sides), and nothing
    // writes it after this.
    let leader_table = {
        let read = scenarios.read().expect("read epoch");
        read.as_slice().expect("contiguous").as_ptr()
    };
    let scenarios = Rc::new(RefCell::new(scenarios));
    let (mine, theirs) = (Rc::clone(&scenarios), Rc::clone(&scenarios));
    bench.add("shared_sum", "ferrompi", table, move |iters| {
        let mut scenarios = mine.borrow_mut();
        timed(iters, || {
            let read = scenarios.read().expect("read epoch");
            std::hint::black_box(sum(read.as_slice().expect("contiguous")));
        })
    });
    let mut sink = 0.0;
    bench.add("shared_sum", "c", table, move |iters| {
        let window = theirs.borrow();
        // SAFETY: `leader_table` points at the leader's `table / 8` values in the memory of
        // `window`, which this closure keeps alive; the window holds a lock_all, under which
        // C's epoch (sync, barrier, sync) is valid; nothing writes the table.
        seconds(unsafe {
            ferrompi_c_shared_sum(
                iters as c_long,
                window.as_raw(),
                node.as_raw(),
                leader_table,
                (table / 8) as c_long,
                &mut sink,
            )
        })
    });
    rows.push(Row {
        group: "shared_sum",
        what: "sum 64 MiB f64 through a read epoch (C: sync + MPI_Barrier + sync + sum)",
        bytes: table,
        target: 1.02,
    });
    // The design's claim beside it, not a comparison with C: the table read in an epoch costs
    // what a private copy does. Only the sums are timed (the epoch is the row above's), so that
    // at more ranks than cores the scheduler's part in the epoch's barrier stays out of it.
    bench.add("shared_read", "ferrompi", table, move |iters| {
        let mut scenarios = scenarios.borrow_mut();
        let read = scenarios.read().expect("read epoch");
        let values = read.as_slice().expect("contiguous");
        timed(iters, || {
            std::hint::black_box(sum(std::hint::black_box(values)));
        })
    });
    let private: Vec<f64> = (0..table / 8).map(|i| i as f64).collect();
    bench.add("shared_read", "c", table, move |iters| {
        timed(iters, || {
            std::hint::black_box(sum(std::hint::black_box(&private)));
        })
    });
    rows.push(Row {
        group: "shared_read",
        what: "sum 64 MiB f64 in a read epoch / over a private Vec (Rust both; sums timed)",
        bytes: table,
        target: 1.02,
    });
    if world.size() != 2 {
        return;
    }
    let next = (world.rank() + 1) % world.size();
    // The `_target` rows make the same calls through `epoch.target(next)`, made once per block:
    // the target's rank checked once, each call checking only its bounds (8 bytes only; at
    // 1 MiB the copy is all there is to time).
    let rows_rma = [
        (false, "rma_put", &RMA[..]),
        (true, "rma_get", &RMA[..]),
        (false, "rma_put_target", &RMA[..1]),
        (true, "rma_get_target", &RMA[..1]),
    ];
    for (get, group, sizes) in rows_rma {
        let via_target = group.ends_with("_target");
        for &bytes in sizes {
            // One window and one buffer for the three sides, as the other rows share theirs.
            // C's side used to allocate a window of its own for each block, so every block ran
            // on a peer segment this process had not touched yet (most likely paying a page
            // fault per page): at 1 MiB on Open MPI ferrompi / C was 0.74-0.77 for put and
            // 0.93-0.94 for get, with Rust's ffi control the same; on one window, 1.00-1.02.
            let win = Rc::new(Window::<u8>::allocate(world, RMA[1]).expect("allocate"));
            let buf = shared(1u8, bytes);
            // Each timed loop makes one kind of call, with `next` by value, as C's compiled
            // loop does (its compiler unswitches the loop on `get` and keeps `next` in a
            // register); a loop that tested a captured flag and reloaded a captured rank on
            // every call timed the harness as well as the binding.
            let (w, b) = (Rc::clone(&win), Rc::clone(&buf));
            bench.add(group, "ferrompi", bytes, move |iters| {
                let buf = &mut b.borrow_mut()[..];
                w.lock_all(Assert::empty(), move |e| match (via_target, get) {
                    (true, true) => {
                        let to = e.target(next).expect("target");
                        timed(iters, || to.get_now(buf, 0).expect("get"))
                    }
                    (true, false) => {
                        let to = e.target(next).expect("target");
                        timed(iters, || to.put_now(buf, 0).expect("put"))
                    }
                    (false, true) => timed(iters, move || e.get_now(buf, next, 0).expect("get")),
                    (false, false) => timed(iters, move || e.put_now(buf, next, 0).expect("put")),
                })
                .expect("lock_all")
            });
            let (w, b) = (Rc::clone(&win), Rc::clone(&buf));
            bench.add(group, FFI, bytes, move |iters| {
                let mut held = b.borrow_mut();
                let buf = held.as_mut_ptr();
                w.lock_all(Assert::empty(), |_| {
                    let (win, byte, count) = (w.as_raw(), u8::datatype().as_raw(), int(bytes));
                    if get {
                        timed(iters, move || {
                            // SAFETY: `buf` holds `count` bytes (borrowed for the block), and
                            // the target's window (of RMA[1] ≥ `bytes`) is under lock_all; each
                            // get completes before the next (flush_local).
                            unsafe {
                                ffi::MPI_Get(buf.cast(), count, byte, next, 0, count, byte, win);
                                ffi::MPI_Win_flush_local(next, win);
                            }
                        })
                    } else {
                        timed(iters, move || {
                            // SAFETY: as above; each put completes before the next (flush).
                            unsafe {
                                ffi::MPI_Put(buf.cast(), count, byte, next, 0, count, byte, win);
                                ffi::MPI_Win_flush(next, win);
                            }
                        })
                    }
                })
                .expect("lock_all")
            });
            bench.add(group, "c", bytes, move |iters| {
                let mut buf = buf.borrow_mut();
                // SAFETY: `buf` holds `bytes` bytes and every rank's window RMA[1] ≥ `bytes`;
                // no epoch is open on the window (the other sides' closed with their blocks),
                // and the C side closes its own before returning.
                seconds(unsafe {
                    ferrompi_c_rma(
                        iters as c_long,
                        c_int::from(get),
                        buf.as_mut_ptr(),
                        int(bytes),
                        win.as_raw(),
                    )
                })
            });
            rows.push(Row {
                group,
                what: match (get, via_target) {
                    (false, false) => "put_now (put + flush)",
                    (true, false) => "get_now (get + flush_local)",
                    (false, true) => "put_now via epoch.target(rank)",
                    (true, true) => "get_now via epoch.target(rank)",
                },
                bytes,
                target: 1.02,
            });
        }
    }
}
