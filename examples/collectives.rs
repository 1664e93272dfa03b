//! A tour of the collectives (MPI-4.0 chapter 6), each result checked: broadcast, reductions
//! (blocking, in place, nonblocking), gather and scatter with equal and uneven blocks,
//! all-to-all, prefix sums, and reduce-scatter.
//!
//! ```sh
//! tools/run-example.sh collectives 4
//! ```

use ferrompi::{Max, Mpi, Partition, Result, Sum};

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (r, n) = (rank as usize, size as usize);

    // bcast: rank 0's values everywhere.
    let mut params = if rank == 0 { [1.5, 2.5] } else { [0.0; 2] };
    world.bcast(&mut params, 0)?;
    assert_eq!(params, [1.5, 2.5]);

    // reduce to a root, allreduce everywhere, in place, and nonblocking in a scope.
    let mine = [f64::from(rank), 1.0];
    let mut at_root = [0.0; 2];
    world.reduce(&mine, &mut at_root, Sum, 0)?;
    let mut everywhere = [0.0; 2];
    world.allreduce(&mine, &mut everywhere, Sum)?;
    let total = f64::from(size * (size - 1) / 2);
    assert_eq!(everywhere, [total, f64::from(size)]);
    if rank == 0 {
        assert_eq!(at_root, everywhere);
    }
    let mut largest = [rank];
    world.allreduce_in_place(&mut largest, Max)?;
    assert_eq!(largest, [size - 1]);
    let mut overlapped = [0.0; 2];
    ferrompi::scope(|s| world.iallreduce(s, &mine, &mut overlapped, Sum)?.wait())?;
    assert_eq!(overlapped, everywhere);

    // gather and allgather of one value each; scatter of one value each.
    let mut ranks = vec![0i32; n];
    world.allgather(&[rank], &mut ranks)?;
    assert_eq!(ranks, (0..size).collect::<Vec<_>>());
    let mut gathered = vec![0i32; if rank == 0 { n } else { 0 }];
    world.gather(&[rank * 10], &mut gathered, 0)?;
    if rank == 0 {
        assert_eq!(gathered, (0..size).map(|x| x * 10).collect::<Vec<_>>());
    }
    let work: Vec<u64> = if rank == 0 {
        (100..100 + n as u64).collect()
    } else {
        vec![]
    };
    let mut item = [0u64];
    world.scatter(&work, &mut item, 0)?;
    assert_eq!(item, [100 + r as u64]);

    // Uneven blocks: rank r contributes r + 1 values; everyone gets them all.
    let blocks = Partition::<u32>::from_counts(&(1..=n).collect::<Vec<_>>())?;
    let contribution = vec![rank as u32; r + 1];
    let mut all = vec![0u32; blocks.extent()];
    world.allgatherv(&contribution, &mut all, &blocks)?;
    let want: Vec<u32> = (0..n).flat_map(|q| vec![q as u32; q + 1]).collect();
    assert_eq!(all, want);

    // alltoall: rank r sends r * 100 + q to rank q.
    let outgoing: Vec<i32> = (0..size).map(|q| rank * 100 + q).collect();
    let mut incoming = vec![0i32; n];
    world.alltoall(&outgoing, &mut incoming)?;
    assert_eq!(
        incoming,
        (0..size).map(|q| q * 100 + rank).collect::<Vec<_>>()
    );

    // Prefix sums: inclusive (scan) and exclusive (exscan, undefined on rank 0).
    let mut inclusive = [0i64];
    world.scan(&[i64::from(rank) + 1], &mut inclusive, Sum)?;
    assert_eq!(inclusive, [i64::from((rank + 1) * (rank + 2) / 2)]);
    let mut exclusive = [0i64];
    world.exscan(&[i64::from(rank) + 1], &mut exclusive, Sum)?;
    if rank > 0 {
        assert_eq!(exclusive, [i64::from(rank * (rank + 1) / 2)]);
    }

    // reduce_scatter_block: a sum of n blocks of 2, block q to rank q.
    let contributions = vec![1.0f64; 2 * n];
    let mut my_block = [0.0; 2];
    world.reduce_scatter_block(&contributions, &mut my_block, Sum)?;
    assert_eq!(my_block, [f64::from(size); 2]);

    world.barrier()?;
    if rank == 0 {
        println!("collectives: every result checked on {size} rank(s)");
    }
    Ok(())
}
