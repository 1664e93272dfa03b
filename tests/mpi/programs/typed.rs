//! Typed (serde) messages: nested values round trip blocking and async, by communicator and
//! by channel; a message that does not decode is a Codec error; from `PROC_NULL`, no value.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{ANY_SOURCE, Mpi, PROC_NULL};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Cut {
    Optimality {
        coefficients: Vec<f64>,
        intercept: f64,
    },
    Feasibility(Vec<(u32, f64)>),
    Empty,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stage {
    id: u32,
    name: String,
    cuts: Vec<Cut>,
    bounds: BTreeMap<String, (f64, f64)>,
    next: Option<Box<Stage>>,
}

fn stage(seed: i32) -> Stage {
    let leaf = Stage {
        id: 1000 + seed as u32,
        name: format!("leaf of {seed}"),
        cuts: vec![Cut::Empty],
        bounds: BTreeMap::new(),
        next: None,
    };
    Stage {
        id: seed as u32,
        name: format!("stage {seed} ✓"),
        cuts: vec![
            Cut::Optimality {
                coefficients: vec![f64::from(seed), -1.5, 1e300],
                intercept: 0.25,
            },
            Cut::Feasibility(vec![(seed as u32, 2.0), (7, f64::MIN_POSITIVE)]),
        ],
        bounds: [
            ("lower".to_string(), (f64::from(seed), 10.0)),
            ("upper".into(), (-1.0, 1.0)),
        ]
        .into(),
        next: Some(Box::new(leaf)),
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = t.okay(mpi.world().dup(), "dup");
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // Blocking receive of a value sent nonblocking (works with one rank too).
    let sent = t.okay(world.isend_value(&stage(rank), next, 1), "isend_value");
    let (got, status) = t.okay(world.recv_value::<Stage>(prev, 1), "recv_value");
    t.eq(got, Some(stage(prev)), "nested value round trip");
    t.eq(status.source(), prev, "recv_value status");
    t.okay(sent.wait().1, "isend_value completes");

    // From PROC_NULL: no value and an empty status at once, blocking and async (mpi4py's
    // `recv(source=PROC_NULL)` is `None`), even with a message waiting under the same tag.
    let waiting = t.okay(world.isend_value(&stage(rank), next, 4), "isend_value");
    let (none, status) = t.okay(
        world.recv_value::<Stage>(PROC_NULL, 4),
        "recv_value PROC_NULL",
    );
    t.eq(none, None, "nothing from PROC_NULL");
    t.ok(status.is_proc_null(), "PROC_NULL status source");
    t.eq_ok(status.count::<u8>(), 0, "PROC_NULL status count");
    let (none, status) = t.okay(
        futures::executor::block_on(world.recv_value_async::<Stage>(PROC_NULL, 4)),
        "recv_value_async PROC_NULL",
    );
    t.eq(
        (none, status.is_proc_null()),
        (None, true),
        "async PROC_NULL",
    );
    let (got, _) = t.okay(
        world.recv_value::<Stage>(prev, 4),
        "recv_value after PROC_NULL",
    );
    t.eq(got, Some(stage(prev)), "the waiting message is still there");
    t.okay(waiting.wait().1, "isend_value completes");

    // Async receives of values of different sizes, from any source, under block_on.
    let sends: Vec<_> = (0..3)
        .map(|k| {
            t.okay(
                world.isend_value(&vec![stage(rank); k + 1], next, 10 + k as i32),
                "isend",
            )
        })
        .collect();
    let results = futures::executor::block_on(futures::future::join_all(
        (0..3).map(|k| world.recv_value_async::<Vec<Stage>>(ANY_SOURCE, 10 + k)),
    ));
    for (k, result) in results.into_iter().enumerate() {
        let (value, status) = t.okay(result, "recv_value_async");
        t.eq(value, Some(vec![stage(prev); k + 1]), "async value");
        t.eq(status.tag(), 10 + k as i32, "async tag");
    }
    for send in sends {
        t.okay(send.wait().1, "send");
    }

    // A message that is not an encoded Stage.
    let garbage = t.okay(world.isend_owned(vec![0xFFu8; 3], next, 2), "isend garbage");
    t.err(
        world.recv_value::<Stage>(prev, 2),
        |e| matches!(e.kind(), ErrorKind::Codec { .. }),
        "garbage does not decode",
    );
    t.okay(garbage.wait().1, "garbage sent");

    // Typed values over a channel.
    let partner = if rank ^ 1 < size { rank ^ 1 } else { rank };
    let channel = t.okay(world.channel(partner, 3), "channel");
    let sent = t.okay(
        channel.isend_value(&("hello", rank, [1.5f32; 3])),
        "channel isend_value",
    );
    let got: (String, i32, [f32; 3]) = t.okay(channel.recv_value(), "channel recv_value");
    t.eq(
        got,
        ("hello".to_string(), partner, [1.5f32; 3]),
        "channel typed value",
    );
    t.okay(sent.wait().1, "channel send");
    let sent = t.okay(channel.isend_value(&stage(rank)), "channel isend_value");
    let (got, _) = t.okay(
        futures::executor::block_on(channel.recv_value_async::<Stage>()),
        "channel async",
    );
    t.eq(got, Some(stage(partner)), "channel async typed value");
    t.okay(sent.wait().1, "channel send");
}
