//! Blocking send modes: ssend, bsend with an attached buffer, rsend to a posted receive,
//! sendrecv_replace, and PROC_NULL as peer.

use crate::checks::Checks;
use ferrompi::{BSEND_OVERHEAD, Error, Mpi, PROC_NULL, scope};

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
        |e| matches!(e, Error::InvalidArgument { .. }),
        "bsend without a buffer",
    );
    let buffer = t.okay(
        mpi.attach_buffer(4 * (800 + BSEND_OVERHEAD)),
        "attach_buffer",
    );
    t.err(
        mpi.attach_buffer(64),
        |e| matches!(e, Error::InvalidArgument { .. }),
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
    let memory = t.okay(buffer.detach(), "detach");
    t.eq(
        memory.len(),
        4 * (800 + BSEND_OVERHEAD),
        "detached buffer handed back",
    );
    let again = t.okay(mpi.attach_buffer(1024), "attach after detach");
    drop(again);

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

    // sendrecv_replace: the buffer goes to next and comes back filled from prev.
    let mut token = [rank as i64 * 10, 5];
    let status = t.okay(
        world.sendrecv_replace(&mut token, next, 6, prev, 6),
        "sendrecv_replace",
    );
    t.eq(token, [prev as i64 * 10, 5], "sendrecv_replace content");
    t.eq(status.source(), prev, "sendrecv_replace status");

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
    let dest: ferrompi::Destination = right.map_or(PROC_NULL.into(), Into::into);
    let source: ferrompi::Source = left.map_or(PROC_NULL.into(), Into::into);
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
