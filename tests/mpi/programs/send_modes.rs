//! Send modes: ssend, bsend with an attached buffer, rsend to a posted receive, their
//! nonblocking (ibsend, irsend) and persistent (bsend_init, rsend_init) forms,
//! sendrecv_replace, isendrecv(_replace), and PROC_NULL as peer.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{BSEND_OVERHEAD, Mpi, PROC_NULL, scope};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // ssend: completes only once the receive has started; pre-post it so one rank works too.
    let mut got = [0i32; 4];
    scope(|s| {
        let r = t.okay(world.irecv(s, &mut got, prev, 1), "irecv");
        t.okay(world.ssend(&[rank; 4], next, 1), "ssend");
        t.okay(r.wait(), "irecv after ssend");
    });
    t.eq(got, [prev; 4], "ssend delivered");

    // bsend without a buffer fails with a clear error; with one it returns at once.
    t.err(
        world.bsend(&[1u8; 64], next, 2),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "bsend without a buffer",
    );
    let buffer = t.okay(
        mpi.attach_buffer(4 * (800 + BSEND_OVERHEAD)),
        "attach_buffer",
    );
    t.err(
        mpi.attach_buffer(64),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "second attach",
    );
    for i in 0..4 {
        t.okay(
            world.bsend(&[rank as f64 + f64::from(i); 100], next, 3),
            "bsend",
        );
    }
    for i in 0..4 {
        let mut v = [0.0f64; 100];
        t.okay(world.recv(&mut v, prev, 3), "recv of bsend");
        t.eq(
            v,
            [prev as f64 + f64::from(i); 100],
            "bsend content, in order",
        );
    }
    // ibsend and bsend_init: completed at once (the copy), received afterwards.
    let payload = [rank as f64; 100];
    scope(|s| {
        let sent = t.okay(world.ibsend(s, &payload, next, 30), "ibsend");
        t.okay(sent.wait(), "ibsend completes without the receiver");
    });
    let mut v = [0.0f64; 100];
    t.okay(world.recv(&mut v, prev, 30), "recv of ibsend");
    t.eq(v, [prev as f64; 100], "ibsend content");
    let mut persistent = t.okay(world.bsend_init(vec![0.0f64; 100], next, 31), "bsend_init");
    for k in 0..3 {
        persistent.buffer_mut().fill(rank as f64 + f64::from(k));
        t.okay(
            persistent.start().and_then(|a| a.wait()),
            "bsend_init start",
        );
        t.okay(world.recv(&mut v, prev, 31), "recv of bsend_init");
        t.eq(v, [prev as f64 + f64::from(k); 100], "bsend_init content");
    }
    t.okay(persistent.into_buffer().map(drop), "bsend_init freed");
    let memory = t.okay(buffer.detach(), "detach");
    t.eq(
        memory.len(),
        4 * (800 + BSEND_OVERHEAD),
        "detached buffer handed back",
    );
    let again = t.okay(mpi.attach_buffer(1024), "attach after detach");
    drop(again);
    scope(|s| {
        t.err(
            world.ibsend(s, &[1u8; 8], next, 2),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "ibsend without a buffer",
        )
    });
    t.err(
        world.bsend_init(vec![1u8; 8], next, 2),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "bsend_init without a buffer",
    );

    // rsend: the receive is posted before the barrier, so it is posted when rsend runs.
    let mut ready = [0u16; 2];
    scope(|s| {
        let r = t.okay(world.irecv(s, &mut ready, prev, 4), "irecv for rsend");
        t.okay(world.barrier(), "barrier");
        // SAFETY: every rank posted its receive before the barrier, and the message goes to the
        // next rank, whose receive from us is among those.
        t.okay(unsafe { world.rsend(&[rank as u16, 7], next, 4) }, "rsend");
        t.okay(r.wait(), "irecv of rsend");
    });
    t.eq(ready, [prev as u16, 7], "rsend delivered");

    // irsend and rsend_init, each to a receive posted before a barrier.
    let mut ready = [0u16; 2];
    let payload = [rank as u16, 8];
    scope(|s| {
        let r = t.okay(world.irecv(s, &mut ready, prev, 5), "irecv for irsend");
        t.okay(world.barrier(), "barrier");
        // SAFETY: as for rsend above.
        let w = t.okay(unsafe { world.irsend(s, &payload, next, 5) }, "irsend");
        t.okay(w.wait(), "irsend");
        t.okay(r.wait(), "irecv of irsend");
    });
    t.eq(ready, [prev as u16, 8], "irsend delivered");
    // SAFETY: each start below follows a barrier that every rank passes after posting its
    // receive, so the matching receive is posted whenever the request starts.
    let mut ready_send = t.okay(
        unsafe { world.rsend_init(vec![0u16; 2], next, 9) },
        "rsend_init",
    );
    let mut inbox = t.okay(world.recv_init(vec![0u16; 2], prev, 9), "recv_init");
    for k in 0..3u16 {
        ready_send.buffer_mut().copy_from_slice(&[rank as u16, k]);
        let r = t.okay(inbox.start(), "start recv_init");
        t.okay(world.barrier(), "barrier");
        t.okay(
            ready_send.start().and_then(|a| a.wait()),
            "rsend_init start",
        );
        t.okay(r.wait(), "recv of rsend_init");
        t.eq(inbox.buffer(), &[prev as u16, k][..], "rsend_init content");
    }

    // sendrecv_replace: the buffer goes to next and comes back filled from prev.
    let mut token = [rank as i64 * 10, 5];
    let status = t.okay(
        world.sendrecv_replace(&mut token, next, 6, prev, 6),
        "sendrecv_replace",
    );
    t.eq(token, [prev as i64 * 10, 5], "sendrecv_replace content");
    t.eq(status.source(), prev, "sendrecv_replace status");

    // isendrecv / isendrecv_replace (MPI-4): Open MPI 4.1 has neither and says so.
    let library = t.okay(mpi.library_version(), "library_version");
    let mut from_prev = [0i64; 3];
    let mut token = [rank as i64, -1];
    let mine = [rank as i64; 3];
    let outcome = scope(|s| {
        world
            .isendrecv(s, &mine, next, 10, &mut from_prev, prev, 10)?
            .wait()?;
        world
            .isendrecv_replace(s, &mut token, next, 11, prev, 11)?
            .wait()
    });
    if library.contains("Open MPI v4") {
        t.err(
            outcome,
            |e| e.class() == Some(ferrompi::ErrorClass::UnsupportedOperation),
            "isendrecv on an MPI without it",
        );
    } else {
        t.ok_with(
            outcome,
            |status| status.source() == prev,
            "isendrecv_replace status",
        );
        t.eq(from_prev, [prev as i64; 3], "isendrecv content");
        t.eq(token, [prev as i64, -1], "isendrecv_replace content");
    }

    // PROC_NULL: sends and receives complete at once and move nothing.
    t.okay(world.send(&[1u8; 8], PROC_NULL, 0), "send to PROC_NULL");
    t.okay(world.ssend(&[1u8; 8], PROC_NULL, 0), "ssend to PROC_NULL");
    let mut untouched = [9u8; 8];
    let status = t.okay(
        world.recv(&mut untouched, PROC_NULL, 0),
        "recv from PROC_NULL",
    );
    t.eq(untouched, [9u8; 8], "PROC_NULL writes nothing");
    t.eq_ok(status.count::<u8>(), 0, "PROC_NULL count");
    // A chain with PROC_NULL at the ends: rank 0 has no left, the last rank no right.
    let left = if rank == 0 { None } else { Some(rank - 1) };
    let right = if rank == size - 1 {
        None
    } else {
        Some(rank + 1)
    };
    let mut from_left = [-1i32];
    let dest: ferrompi::Destination = right.map_or_else(|| PROC_NULL.into(), Into::into);
    let source: ferrompi::Source = left.map_or_else(|| PROC_NULL.into(), Into::into);
    t.okay(
        world.sendrecv(&[rank], dest, 8, &mut from_left, source, 8),
        "chain shift",
    );
    t.eq(
        from_left[0],
        left.unwrap_or(-1),
        "chain shift with PROC_NULL ends",
    );
}
