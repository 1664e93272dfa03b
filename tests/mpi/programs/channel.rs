//! Channels: ping-pong between partner ranks with bytes, Pod structs and owned async buffers,
//! and isolation from user traffic on the same tag.

use crate::checks::Checks;
use crate::values::{Point, values};
use ferrompi::{Bytes, Mpi, scope};

const ROUNDS: u32 = 50;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    // Pairs (0, 1), (2, 3), …; with an odd size the last rank opens a channel to itself.
    let partner = if rank ^ 1 < size { rank ^ 1 } else { rank };
    let alone = partner == rank;
    let channel = t.okay(world.channel(partner, 5), "open channel");
    t.eq(
        channel.communicator().size(),
        if alone { 1 } else { 2 },
        "channel communicator size",
    );
    let leader = rank < partner || alone;

    // Byte ping-pong: the leader pings, the partner pongs back what it got plus one.
    let mut buf = [0u8; 16];
    for round in 0..ROUNDS {
        let ping = [round as u8; 16];
        if alone {
            // A channel to oneself: post the receive first.
            let pending = t.okay(channel.irecv(vec![0u8; 16]), "irecv");
            t.okay(channel.send(&ping), "send");
            let (got, status) = pending.wait();
            t.okay(status, "recv");
            t.eq(&got[..], &ping[..], "self channel");
        } else if leader {
            t.okay(channel.send(&ping), "ping");
            let n = t.okay(channel.recv(&mut buf), "pong");
            t.eq(n, 16, "pong size");
            t.eq(buf, [round as u8 + 1; 16], "pong content");
        } else {
            let n = t.okay(channel.recv(&mut buf), "ping");
            t.eq(n, 16, "ping size");
            t.eq(buf, [round as u8; 16], "ping content");
            t.okay(channel.send(&[round as u8 + 1; 16]), "pong");
        }
    }

    // Pod structs of any length through recv_vec.
    let points: Vec<Bytes<Point>> = values(rank as u64, 7 + rank as usize);
    let sent = t.okay(channel.isend(points.clone()), "isend points");
    let got = t.okay(channel.recv_vec::<Bytes<Point>>(), "recv_vec points");
    t.eq(
        got,
        values::<Bytes<Point>>(partner as u64, 7 + partner as usize),
        "points from partner",
    );
    let (back, status) = sent.wait();
    t.okay(status, "points sent");
    t.eq(back, points, "send buffer handed back");

    // Async on owned buffers, awaited together.
    let (received, sent) = futures::executor::block_on(async {
        let recv = channel.irecv(vec![0u64; 32]).expect("irecv");
        let send = channel.isend(vec![rank as u64; 32]).expect("isend");
        futures::future::join(recv, send).await
    });
    t.okay(received.1, "async recv");
    t.okay(sent.1, "async send");
    t.eq(
        received.0,
        vec![partner as u64; 32],
        "async channel content",
    );

    // Isolation: a user message on world with the channel's tag is not seen by the channel.
    let mut user = [0i32];
    scope(|s| {
        let r = t.okay(world.irecv(s, &mut user, partner, 5), "user irecv");
        let w = t.okay(
            world.isend(s, &[-1i32], partner, 5),
            "user isend on the same tag",
        );
        let c = t.okay(channel.isend(vec![rank; 1]), "channel isend");
        let mut from_channel = [0i32];
        t.okay(
            channel
                .communicator()
                .recv(&mut from_channel, channel_peer(alone, rank, partner), 5),
            "channel recv",
        );
        t.eq(
            from_channel,
            [partner],
            "the channel got the channel's message",
        );
        t.okay(r.wait(), "user recv");
        t.okay(w.wait(), "user send");
        t.okay(c.wait().1, "channel send");
    });
    t.eq(user, [-1], "the user got the user's message");
    t.okay(channel.close(), "close");
    t.err(
        world.channel(size, 5),
        |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidRank { .. }),
        "bad peer",
    );
}

/// The partner's rank inside the channel's own two-process communicator.
fn channel_peer(alone: bool, rank: i32, partner: i32) -> i32 {
    if alone { 0 } else { i32::from(rank < partner) }
}
