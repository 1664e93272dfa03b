//! Which of ferrompi's operations a program gets inlined when it calls them from more than one
//! place. `tools/inlining.sh` builds this program in release mode, disassembles it and fails if
//! either of its two copies of `every_operation!` calls into ferrompi for anything but the
//! paths that are out of line by design: large counts (`*_big`, `*_large`), the slow paths of
//! the thread gate and of the argument checks (`*_slow`), errors, and setting up and cleaning
//! up (`*_init`, `lock_all`, `Partition::uniform`, drops); the script lists them.
//!
//! Why two copies: LLVM inlines a generic function called from one place whatever its size (the
//! "last call" bonus), so a program that calls an operation once cannot tell whether a program
//! that calls it from several places gets it inlined. `recv` was once out of line in the
//! comparison benchmark (four call sites), costing MPICH 5 about 30 ns per round trip, while
//! the instruction-count program (one call site) counted it inlined.
//!
//! Nothing here runs: `main` guards both copies with `black_box(false)`, which the compiler cannot
//! see through, so they stay in the program. Run (as `cargo bench` does, with `--test` or
//! without), it only initialises MPI and says so.

use ferrompi::op::Sum;
use ferrompi::window::{Assert, WindowEpoch};
use ferrompi::{Communicator, Mpi, Partition, RequestSet, RequestStorage, Scope, Window};
use std::hint::black_box;

/// Every blocking, nonblocking and persistent operation a hot loop makes, and the RMA calls of
/// an epoch, each once, with the same types in both copies.
macro_rules! every_operation {
    ($mpi:expr, $world:expr, $nonblocking:ident, $rma:ident) => {{
        let (mpi, world): (&Mpi, &Communicator<'_>) = ($mpi, $world);
        let me = world.rank();
        let (send, mut got, mut other, mut third) = ([1.5f64], [0.0f64], [0.0f64], [0.0f64]);
        let blocks = Partition::<f64>::uniform(1, 1).expect("partition");
        // Point to point.
        world.send(&send, me, 0).expect("send");
        world.ssend(&send, me, 0).expect("ssend");
        world.bsend(&send, me, 0).expect("bsend");
        world.recv(&mut got, me, 0).expect("recv");
        black_box(
            world
                .sendrecv(&send, me, 0, &mut got, me, 0)
                .expect("sendrecv"),
        );
        black_box(
            world
                .sendrecv_replace(&mut got, me, 0, me, 0)
                .expect("sendrecv_replace"),
        );
        black_box(world.probe(me, 0).expect("probe"));
        black_box(world.iprobe(me, 0).expect("iprobe"));
        // What a loop reads: a status's fields, the clock, the raw handle.
        let status = world.recv(&mut got, me, 0).expect("recv");
        black_box((status.source(), status.tag(), status.is_empty()));
        black_box((status.is_proc_null(), status.count::<f64>().expect("count")));
        black_box((mpi.wtime(), world.as_raw()));
        // Blocking collectives, with separate buffers and in place.
        world.barrier().expect("barrier");
        world.bcast(&mut got, 0).expect("bcast");
        world.reduce(&send, &mut got, Sum, 0).expect("reduce");
        world
            .reduce_in_place(&mut got, Sum, 0)
            .expect("reduce_in_place");
        world.allreduce(&send, &mut got, Sum).expect("allreduce");
        world
            .allreduce_in_place(&mut got, Sum)
            .expect("allreduce_in_place");
        world.scan(&send, &mut got, Sum).expect("scan");
        world.scan_in_place(&mut got, Sum).expect("scan_in_place");
        world.exscan(&send, &mut got, Sum).expect("exscan");
        world
            .exscan_in_place(&mut got, Sum)
            .expect("exscan_in_place");
        world
            .reduce_scatter_block(&send, &mut got, Sum)
            .expect("reduce_scatter_block");
        world
            .reduce_scatter_block_in_place(&mut got, Sum)
            .expect("in place");
        world
            .reduce_scatter_in_place(&mut got, &blocks, Sum)
            .expect("reduce_scatter");
        world.gather(&send, &mut got, 0).expect("gather");
        world.gather_in_place(&mut got, 0).expect("gather_in_place");
        world.scatter(&send, &mut got, 0).expect("scatter");
        world
            .scatter_in_place(&mut got, 0)
            .expect("scatter_in_place");
        world.allgather(&send, &mut got).expect("allgather");
        world
            .allgather_in_place(&mut got)
            .expect("allgather_in_place");
        world.alltoall(&send, &mut got).expect("alltoall");
        // Neighbourhood collectives, on a periodic ring of this process (two neighbours).
        let ring = world
            .cart_create(&[1], &[true], false)
            .expect("cart_create");
        let ring = ring.expect("a ring of every process");
        let (two, mut back) = ([1.5f64; 2], [0.0f64; 2]);
        let pair = Partition::<f64>::uniform(2, 1).expect("partition");
        ring.neighbor_allgather(&send, &mut back)
            .expect("neighbor_allgather");
        ring.neighbor_allgatherv(&send, &mut back, &pair)
            .expect("neighbor_allgatherv");
        ring.neighbor_alltoall(&two, &mut back)
            .expect("neighbor_alltoall");
        ring.neighbor_alltoallv(&two, &pair, &mut back, &pair)
            .expect("neighbor_alltoallv");
        world
            .alltoall_in_place(&mut got)
            .expect("alltoall_in_place");
        world.gatherv(&send, &mut got, &blocks, 0).expect("gatherv");
        world
            .gatherv_in_place(&mut got, &blocks, 0)
            .expect("gatherv_in_place");
        world
            .scatterv(&send, &mut got, &blocks, 0)
            .expect("scatterv");
        world
            .scatterv_in_place(&mut got, &blocks, 0)
            .expect("scatterv_in_place");
        world
            .allgatherv(&send, &mut got, &blocks)
            .expect("allgatherv");
        world
            .allgatherv_in_place(&mut got, &blocks)
            .expect("allgatherv_in_place");
        world
            .alltoallv(&send, &blocks, &mut got, &blocks)
            .expect("alltoallv");
        world
            .alltoallv_in_place(&mut got, &blocks)
            .expect("alltoallv_in_place");
        // Nonblocking, in a scope: requests, a set, nonblocking collectives.
        let mut storage = RequestStorage::with_capacity(2);
        ferrompi::scope(|s| $nonblocking(s, world, &mut storage, &mut got, &mut other, &mut third))
            .expect("scope");
        // Persistent: start and wait (made by `*_init`, out of line by design).
        let mut sending = world.send_init(vec![1.5f64], me, 0).expect("send_init");
        black_box(sending.start().and_then(|a| a.wait()).expect("start"));
        let mut summing = world
            .allreduce_init(vec![1.5f64], vec![0.0f64], Sum)
            .expect("allreduce_init");
        black_box(summing.start().and_then(|a| a.wait()).expect("start"));
        // RMA in a passive epoch.
        let (bytes, mut buf) = (
            Window::<u8>::allocate(world, 8).expect("allocate"),
            [0u8; 8],
        );
        bytes
            .lock_all(Assert::empty(), |epoch| $rma(epoch, me, &mut buf))
            .expect("lock_all");
    }};
}

/// The nonblocking calls, in a function of their own so that the check sees them (inside
/// `scope`'s closure they would be compiled into ferrompi's `scope`).
macro_rules! nonblocking_operations {
    ($s:expr, $world:expr, $storage:expr, $got:expr, $other:expr, $third:expr) => {{
        let (s, world, me, send) = ($s, $world, $world.rank(), &[1.5f64]);
        let mut receiving = world.irecv(s, $got, me, 0)?;
        black_box(receiving.test()?);
        black_box(receiving.is_pending());
        black_box(receiving.wait()?);
        black_box(world.isend(s, send, me, 0)?.wait()?);
        black_box(world.issend(s, send, me, 0)?.wait()?);
        let mut set = RequestSet::with_storage(s, $storage);
        set.push(world.irecv(s, $other, me, 0)?);
        world.isend_into(&mut set, s, send, me, 0)?;
        black_box((set.len(), set.pending(), set.test_any()?, set.test_all()?));
        set.wait_all()?;
        black_box(world.ibarrier(s)?.wait()?);
        black_box(world.iallreduce(s, send, $third, Sum)?.wait()?);
        Ok(())
    }};
}

/// The RMA calls of a passive epoch, in a function of their own for the same reason.
macro_rules! rma_operations {
    ($epoch:expr, $me:expr, $buf:expr) => {{
        let (epoch, me, buf): (&WindowEpoch<'_, '_, u8>, i32, &mut [u8]) = ($epoch, $me, $buf);
        epoch.put_now(buf, me, 0).expect("put");
        epoch.get_now(buf, me, 0).expect("get");
        let to = epoch.target(me).expect("target");
        to.put_now(buf, 0).expect("put");
        to.get_now(buf, 0).expect("get");
        black_box(to.fetch_and_op(1, 0, Sum).expect("fetch_and_op"));
    }};
}

/// One copy of every call: the copy's function, its nonblocking calls and its RMA calls.
macro_rules! copy {
    ($name:ident, $nonblocking:ident, $rma:ident) => {
        #[inline(never)]
        fn $name(mpi: &Mpi, world: &Communicator<'_>) {
            every_operation!(mpi, world, $nonblocking, $rma)
        }

        #[inline(never)]
        fn $nonblocking<'s>(
            s: &'s Scope<'s, '_>,
            world: &'s Communicator<'_>,
            storage: &'s mut RequestStorage,
            got: &'s mut [f64],
            other: &'s mut [f64],
            third: &'s mut [f64],
        ) -> ferrompi::Result<()> {
            nonblocking_operations!(s, world, storage, got, other, third)
        }

        #[inline(never)]
        fn $rma(epoch: &WindowEpoch<'_, '_, u8>, me: i32, buf: &mut [u8]) {
            rma_operations!(epoch, me, buf)
        }
    };
}

copy!(first_copy, first_nonblocking, first_rma);
copy!(second_copy, second_nonblocking, second_rma);

fn main() {
    let mpi = Mpi::init().expect("MPI init");
    let world = mpi.world();
    if black_box(false) {
        first_copy(&mpi, &world);
    }
    if black_box(false) {
        second_copy(&mpi, &world);
    }
    println!("inlining: nothing to run (tools/inlining.sh disassembles this program)");
}
