//! Probes and matched receives: probe/iprobe, mprobe/improbe + Message, recv_vec of unknown
//! sizes from any source, recv_uninit, and discarding a matched message.

use crate::checks::Checks;
use crate::values::values;
use ferrompi::ErrorKind;
use ferrompi::{ANY_SOURCE, ANY_TAG, Bytes, Mpi, scope};
use std::mem::MaybeUninit;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = t.okay(mpi.world().dup(), "dup");
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // probe then recv.
    let len = 10 + rank as usize * 7;
    let out: Vec<f64> = values(rank as u64, len);
    let mut got = Vec::new();
    scope(|s| {
        let w = t.okay(world.isend(s, &out, next, 40), "isend");
        t.okay(world.probe(prev, 40), "probe"); // blocks until it is there
        let status = t
            .okay(world.iprobe(prev, 40), "iprobe")
            .expect("probed message is there");
        let n = t.okay(status.count::<f64>(), "count");
        t.eq(n, 10 + prev as usize * 7, "probed size");
        got = vec![0.0; n];
        t.okay(world.recv(&mut got, prev, 40), "recv probed");
        t.okay(w.wait(), "send");
    });
    t.eq(
        got,
        values::<f64>(prev as u64, 10 + prev as usize * 7),
        "probed message content",
    );
    t.ok_with(
        world.iprobe(ANY_SOURCE, 41),
        |v| v.is_none(),
        "iprobe finds nothing",
    );
    t.ok_with(
        world.improbe(ANY_SOURCE, 41),
        |v| v.is_none(),
        "improbe finds nothing",
    );

    // recv_vec of unknown sizes, fan-in with ANY_SOURCE: rank r sends r*13+1 values to 0.
    let mine: Vec<Bytes<crate::values::Point>> = values(rank as u64 + 3, rank as usize * 13 + 1);
    scope(|s| {
        let w = t.okay(world.isend(s, &mine, 0, 42), "isend to 0");
        if rank == 0 {
            let mut from = Vec::new();
            for _ in 0..size {
                let (v, status) = t.okay(
                    world.recv_vec::<Bytes<crate::values::Point>>(ANY_SOURCE, 42),
                    "recv_vec",
                );
                let src = status.source();
                t.eq(
                    v,
                    values(src as u64 + 3, src as usize * 13 + 1),
                    format!("recv_vec from {src}"),
                );
                from.push(src);
            }
            from.sort();
            t.eq(
                from,
                (0..size).collect::<Vec<_>>(),
                "recv_vec from every rank",
            );
        }
        t.okay(w.wait(), "send");
    });

    // mprobe + Message::recv, improbe + recv_vec, and a whole-element check.
    let (six, three) = ([rank as u32; 6], [1u8, 2, 3]);
    scope(|s| {
        let w1 = t.okay(world.isend(s, &six, next, 43), "isend");
        let w2 = t.okay(world.isend(s, &three, next, 44), "isend");
        let message = t.okay(world.mprobe(prev, 43), "mprobe");
        t.eq(message.status().tag(), 43, "message tag");
        t.eq_ok(message.status().count::<u32>(), 6, "message count");
        let mut buf = [0u32; 6];
        t.okay(message.recv(&mut buf), "mrecv");
        t.eq(buf, [prev as u32; 6], "mrecv content");
        let message = loop {
            if let Some(m) = t.okay(world.improbe(prev, ANY_TAG), "improbe") {
                break m;
            }
        };
        t.err(
            message.status().count::<u16>(),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "3 bytes are not u16s",
        );
        let (v, _) = t.okay(message.recv_vec::<u8>(), "improbe recv_vec");
        t.eq(v, vec![1u8, 2, 3], "improbe content");
        t.okay(w1.wait(), "send 1");
        t.okay(w2.wait(), "send 2");
    });

    // recv_uninit fills only what arrived.
    let mut storage = [MaybeUninit::<i16>::uninit(); 16];
    let triple = [rank as i16, -1, 2];
    scope(|s| {
        let w = t.okay(world.isend(s, &triple, next, 45), "isend");
        let (filled, status) = t.okay(world.recv_uninit(&mut storage, prev, 45), "recv_uninit");
        t.eq(&*filled, &[prev as i16, -1, 2][..], "recv_uninit content");
        t.eq(status.source(), prev, "recv_uninit status");
        t.okay(w.wait(), "send");
    });

    // A matched message dropped unreceived is discarded, so it cannot match later receives.
    let discard = [99u8; 5];
    scope(|s| {
        let w = t.okay(world.isend(s, &discard, next, 46), "isend");
        let message = t.okay(world.mprobe(prev, 46), "mprobe to discard");
        drop(message);
        t.okay(w.wait(), "send");
    });
    t.okay(world.barrier(), "barrier");
    t.ok_with(
        world.iprobe(ANY_SOURCE, 46),
        |v| v.is_none(),
        "discarded message is gone",
    );
}
