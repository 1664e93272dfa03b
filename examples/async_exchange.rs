//! The gradient-exchange pattern `reqs.append(Isend); reqs.append(Irecv); Waitall(reqs)`, two
//! ways: a request set in a scope, and futures awaited by an executor.
//!
//! ```sh
//! tools/run-example.sh async_exchange 4
//! ```

use ferrompi::{Mpi, RequestSet, Result, scope};
use futures::future::join_all;

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let gradient: Vec<f32> = (0..1024).map(|i| (rank * 1024 + i) as f32).collect();

    // 1. Scoped requests in a set, completed by one MPI_Waitall: no allocation per request.
    let mut from_peers = vec![vec![0.0f32; gradient.len()]; size as usize];
    scope(|s| -> Result<()> {
        let mut requests = RequestSet::with_capacity(s, 2 * size as usize);
        for (peer, buf) in from_peers.iter_mut().enumerate() {
            requests.push(world.irecv(s, buf, peer as i32, 0)?);
        }
        for peer in 0..size {
            requests.push(world.isend(s, &gradient, peer, 0)?);
        }
        requests.wait_all()
    })?;
    let sum: f32 = from_peers.iter().map(|g| g[0]).sum();

    // 2. The same exchange as futures on owned buffers, awaited together.
    let receives: Vec<_> = (0..size)
        .map(|peer| world.irecv_owned(vec![0.0f32; gradient.len()], peer, 1))
        .collect::<Result<_>>()?;
    let sends: Vec<_> = (0..size)
        .map(|peer| world.isend_owned(gradient.clone(), peer, 1))
        .collect::<Result<_>>()?;
    let (received, sent) = futures::executor::block_on(async {
        futures::future::join(join_all(receives), join_all(sends)).await
    });
    for (_, status) in sent {
        status?;
    }
    let mut async_sum = 0.0;
    for (buf, status) in received {
        status?;
        async_sum += buf[0];
    }
    println!(
        "rank {rank}: first-element sum over {size} ranks = {sum} (scoped) = {async_sum} (async)"
    );
    assert_eq!(sum, async_sum);
    Ok(())
}
