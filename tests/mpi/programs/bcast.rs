//! Broadcast: every type, roots 0 and last, several sizes, and bad roots and counts.

use crate::checks::Checks;
use crate::for_each_type;
use crate::values::{TestValue, values};
use ferrompi::ErrorKind;
use ferrompi::{Communicator, Mpi};

fn bcast<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks) {
    for root in [0, comm.size() - 1] {
        for len in [0, 1, 1000] {
            let mut buf = if comm.rank() == root {
                values(root as u64 + 7, len)
            } else {
                vec![T::default(); len]
            };
            t.okay(comm.bcast(&mut buf, root), "bcast");
            t.eq(
                buf,
                values(root as u64 + 7, len),
                format!("{} x {len} from root {root}", std::any::type_name::<T>()),
            );
        }
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let size = world.size();
    for_each_type!(bcast(&world, t));
    for root in [0, size - 1] {
        let mut big: Vec<u8> = if world.rank() == root {
            values(3, 1 << 20)
        } else {
            vec![0; 1 << 20]
        };
        t.okay(world.bcast(&mut big, root), "bcast 1 MiB");
        t.eq(big == values::<u8>(3, 1 << 20), true, "1 MiB bcast content");
    }
    let mut buf = [0i32; 4];
    t.err(
        world.bcast(&mut buf, size),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { role: "root", .. }),
        "root == size",
    );
    t.err(
        world.bcast(&mut buf, -1),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { role: "root", .. }),
        "root -1",
    );
    t.okay(world.barrier(), "barrier after errors");
}
