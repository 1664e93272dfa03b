//! Windows on communicators that span nodes. Run on one machine it checks the one-node path;
//! `tools/test.sh` also runs it over two fake hosts (`tools/netns.sh`, Open MPI), where
//! `FERROMPI_EXPECT_NODES=2` says how many nodes the world must span: a shared window on the
//! world is then `ErrorKind::NotSharedMemory` on every rank and the job goes on, while node
//! windows and RMA windows across the nodes work.

use super::shared_window::sum_over;
use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::Mpi;
use ferrompi::window::{Assert, SharedWindow, Window};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let node = t.okay(world.split_shared(0), "split_shared");
    let nodes = t.okay(sum_over(&world, i32::from(node.rank() == 0)), "count nodes");
    if let Ok(expected) = std::env::var("FERROMPI_EXPECT_NODES") {
        let expected: i32 = expected.parse().expect("FERROMPI_EXPECT_NODES: a number");
        t.eq(
            nodes.min(expected),
            expected.min(world.size()),
            "nodes spanned",
        );
    }
    let on_world = SharedWindow::<u64>::allocate(&world, 4);
    if nodes > 1 {
        t.err(
            on_world,
            |e| {
                matches!(e.kind(), ErrorKind::NotSharedMemory { size, node: n, .. }
                    if *size == world.size() && *n == node.size())
            },
            "a shared window over nodes",
        );
    } else {
        t.ok(on_world.is_ok(), "a shared window over one node");
    }
    // Node windows work on every node at once.
    let mut shared = t.okay(SharedWindow::<i32>::allocate(&node, 2), "node window");
    t.okay(
        shared.write().map(|mut w| w.local().fill(world.rank())),
        "write",
    );
    let read = t.okay(shared.read(), "read");
    let ranks: Vec<i32> = read
        .as_slice()
        .unwrap()
        .iter()
        .step_by(2)
        .copied()
        .collect();
    t.eq(
        ranks.len(),
        node.size() as usize,
        "one segment per node rank",
    );
    // RMA across nodes: a ring of puts.
    let next = (world.rank() + 1) % world.size();
    let prev = (world.rank() + world.size() - 1) % world.size();
    let win = t.okay(Window::<i32>::allocate(&world, 1), "world window");
    let mine = [world.rank() + 100];
    t.okay(
        win.fence(Assert::NOSUCCEED, |e| e.put(&mine, next, 0)),
        "fence",
    )
    .unwrap();
    t.eq_ok(
        win.into_vec(),
        vec![prev + 100],
        "put from the previous rank",
    );
}
