//! Persistent point-to-point: send_init/recv_init with start/wait over many iterations, buffers
//! changed between starts, start_all, and a leaked Active that must stay sound.

use crate::checks::Checks;
use ferrompi::{Mpi, PersistentRequest};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    let mut recv = t.okay(world.recv_init(vec![0u64; 32], prev, 50), "recv_init");
    let mut send = t.okay(world.send_init(vec![0u64; 32], next, 50), "send_init");
    for iteration in 0..100u64 {
        for (i, v) in send.buffer_mut().iter_mut().enumerate() {
            *v = iteration * 1000 + rank as u64 * 100 + i as u64;
        }
        let mut r = t.okay(recv.start(), "start recv");
        let s = t.okay(send.start(), "start send");
        t.okay(s.wait(), "wait send");
        if iteration % 10 == 0 {
            // MPI_Request_get_status on an active persistent receive: it stays active.
            while t.okay(r.get_status(), "get_status").is_none() {}
        }
        let status = t.okay(r.wait(), "wait recv");
        t.eq(status.source(), prev, "persistent status");
        let want: Vec<u64> = (0..32)
            .map(|i| iteration * 1000 + prev as u64 * 100 + i)
            .collect();
        t.eq(recv.buffer(), &want[..], format!("iteration {iteration}"));
    }

    // start_all over several receives, then sends.
    let mut recvs: Vec<PersistentRequest<'_, Vec<i32>>> = (0..3)
        .map(|k| t.okay(world.recv_init(vec![0; 4], prev, 60 + k), "recv_init"))
        .collect();
    let mut sends: Vec<PersistentRequest<'_, Vec<i32>>> = (0..3)
        .map(|k| {
            t.okay(
                world.send_init(vec![rank * 10 + k; 4], next, 60 + k),
                "send_init",
            )
        })
        .collect();
    for _ in 0..5 {
        let r = t.okay(PersistentRequest::start_all(&mut recvs), "start_all recvs");
        let s = t.okay(PersistentRequest::start_all(&mut sends), "start_all sends");
        t.okay(s.wait_all(), "wait_all sends");
        t.okay(r.wait_all(), "wait_all recvs");
        for (k, r) in recvs.iter_mut().enumerate() {
            t.eq(
                r.buffer(),
                &[prev * 10 + k as i32; 4][..],
                "start_all content",
            );
        }
    }

    // Leaking an Active: the request completes the operation before handing the buffer out.
    let r = t.okay(recv.start(), "start recv");
    std::mem::forget(r);
    for v in send.buffer_mut() {
        *v = 4242;
    }
    let s = t.okay(send.start(), "start send");
    t.okay(s.wait(), "send");
    t.eq(
        recv.buffer(),
        &[4242u64; 32][..],
        "buffer after a leaked Active is complete",
    );

    // Drop of an active receive whose message never comes cancels it (no hang).
    let mut lonely = t.okay(
        world.recv_init(vec![0u8; 4], prev, 70),
        "recv_init unmatched",
    );
    let active = t.okay(lonely.start(), "start unmatched");
    drop(active);
    let back = t.okay(lonely.into_buffer(), "into_buffer");
    t.eq(
        back,
        vec![0u8; 4],
        "cancelled receive left the buffer alone",
    );
    t.okay(world.barrier(), "barrier");
}
