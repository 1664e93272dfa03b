//! Top-k sparsified gradient allreduce, the pattern of data-parallel training that sends only
//! each rank's k largest gradient entries:
//!
//! 1. every rank keeps its k largest-magnitude entries as `(index, value)` pairs (k differs per
//!    rank, as it does when k is a fraction of a dynamic support);
//! 2. **gather path**: `allgather` of the pair counts, then `allgatherv` of the pairs, and every
//!    rank sums all pairs into a dense vector;
//! 3. **sharded path**: each rank owns a shard of the index space; `alltoall` of chunk sizes, then
//!    grouped `isend`/`irecv` of the pairs to the shard owners, a local sum per shard, and an
//!    `allgatherv` of the shards;
//! 4. both results are checked against a dense `allreduce` of the same sparsified gradients;
//! 5. with the feature `cuda`, the dense allreduce and the pairs' allgatherv run again on device
//!    buffers ([`ferrompi::gpu`]): on a GPU with `--gpu`, else on an emulated device; their
//!    results must equal the host's, and rank 0 prints both paths' time per iteration.
//!
//! Gradient values are multiples of 1/1024, so the sums are exact in any order and the check
//! can demand equality.
//!
//! ```sh
//! tools/run-example.sh topk_sparse_allreduce 4
//! mpirun -n 4 target/release/examples/topk_sparse_allreduce --gpu   # built with --features cuda
//! ```

use ferrompi::{Bytes, Mpi, Partition, RequestSet, Result, Sum, scope};

const N: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Entry {
    index: u32,
    _pad: u32,
    value: f64,
}

/// A deterministic pseudo-random dense gradient.
fn gradient(rank: i32) -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (rank as u64 + 1);
    (0..N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state % 4001) as f64 - 2000.0) / 1024.0
        })
        .collect()
}

/// The k largest-magnitude entries, in index order.
fn top_k(dense: &[f64], k: usize) -> Vec<Bytes<Entry>> {
    let mut order: Vec<usize> = (0..dense.len()).collect();
    order.select_nth_unstable_by(k - 1, |&a, &b| {
        dense[b].abs().total_cmp(&dense[a].abs()).then(a.cmp(&b))
    });
    let mut chosen = order[..k].to_vec();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .map(|i| {
            Bytes(Entry {
                index: i as u32,
                _pad: 0,
                value: dense[i],
            })
        })
        .collect()
}

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let n_ranks = size as usize;

    let dense = gradient(rank);
    let k = 1000 + 250 * rank as usize;
    let mine = top_k(&dense, k);

    // Reference: a dense allreduce of the sparsified gradients.
    let mut sparsified = vec![0.0f64; N];
    for e in &mine {
        sparsified[e.0.index as usize] = e.0.value;
    }
    let mut reference = vec![0.0f64; N];
    world.allreduce(&sparsified, &mut reference, Sum)?;

    // Gather path: allgather of counts, allgatherv of pairs.
    let mut counts = vec![0u64; n_ranks];
    world.allgather(&[mine.len() as u64], &mut counts)?;
    let lengths: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let blocks = Partition::<Bytes<Entry>>::from_counts(&lengths)?;
    let mut everyone = vec![
        Bytes(Entry {
            index: 0,
            _pad: 0,
            value: 0.0
        });
        blocks.extent()
    ];
    world.allgatherv(&mine, &mut everyone, &blocks)?;
    let mut gathered = vec![0.0f64; N];
    for e in &everyone {
        gathered[e.0.index as usize] += e.0.value;
    }

    // Sharded path: shard s owns indices [s * N / size, (s + 1) * N / size).
    let shard_of = |index: u32| (index as usize * n_ranks / N).min(n_ranks - 1);
    let shard_range = |s: usize| (s * N / n_ranks)..((s + 1) * N / n_ranks);
    let mut by_shard: Vec<Vec<Bytes<Entry>>> = vec![Vec::new(); n_ranks];
    for e in &mine {
        by_shard[shard_of(e.0.index)].push(*e);
    }
    let outgoing: Vec<u64> = by_shard.iter().map(|v| v.len() as u64).collect();
    let mut incoming = vec![0u64; n_ranks];
    world.alltoall(&outgoing, &mut incoming)?;
    let mut received: Vec<Vec<Bytes<Entry>>> = incoming
        .iter()
        .map(|&c| {
            vec![
                Bytes(Entry {
                    index: 0,
                    _pad: 0,
                    value: 0.0
                });
                c as usize
            ]
        })
        .collect();
    scope(|s| -> Result<()> {
        let mut requests = RequestSet::with_capacity(s, 2 * n_ranks);
        for (from, buf) in received.iter_mut().enumerate() {
            requests.push(world.irecv(s, buf, from as i32, 7)?);
        }
        for (to, chunk) in by_shard.iter().enumerate() {
            requests.push(world.isend(s, chunk, to as i32, 7)?);
        }
        requests.wait_all()
    })?;
    let my_range = shard_range(rank as usize);
    let mut shard = vec![0.0f64; my_range.len()];
    for e in received.iter().flatten() {
        shard[e.0.index as usize - my_range.start] += e.0.value;
    }
    let shard_lengths: Vec<usize> = (0..n_ranks).map(|s| shard_range(s).len()).collect();
    let shards = Partition::<f64>::from_counts(&shard_lengths)?;
    let mut sharded = vec![0.0f64; N];
    world.allgatherv(&shard, &mut sharded, &shards)?;

    // Checks, on every rank; rank 0 reports.
    let gather_ok = gathered == reference;
    let sharded_ok = sharded == reference;
    let nonzero = reference.iter().filter(|v| **v != 0.0).count();
    let mut all_ok = [u8::from(gather_ok && sharded_ok)];
    world.allreduce_in_place(&mut all_ok, ferrompi::Min)?;
    if rank == 0 {
        let total: usize = lengths.iter().sum();
        println!(
            "top-k sparse allreduce over {size} ranks: {total} (index, value) pairs sent, {nonzero} nonzero results"
        );
        println!(
            "check: gather path {} and sharded path {} the dense allreduce on all ranks: {}",
            if gather_ok { "matches" } else { "DIFFERS FROM" },
            if sharded_ok {
                "matches"
            } else {
                "DIFFERS FROM"
            },
            if all_ok[0] == 1 { "OK" } else { "FAILED" }
        );
    }
    assert!(
        all_ok[0] == 1,
        "sparse allreduce differs from the dense reference"
    );
    #[cfg(feature = "cuda")]
    on_device(&mpi, &sparsified, &reference, &mine, &everyone, &blocks)?;
    Ok(())
}

/// The dense allreduce and the pairs' allgatherv again, on device buffers: equal to the host
/// results on every rank, and the time per iteration of both paths, interleaved.
#[cfg(feature = "cuda")]
fn on_device(
    mpi: &Mpi,
    sparsified: &[f64],
    reference: &[f64],
    mine: &[Bytes<Entry>],
    everyone: &[Bytes<Entry>],
    blocks: &Partition<Bytes<Entry>>,
) -> Result<()> {
    use ferrompi::gpu::{Cuda, Transfer};
    use std::time::{Duration, Instant};
    let world = &mpi.world();
    let support = mpi.gpu_support()?;
    let gpu = std::env::args().any(|a| a == "--gpu");
    let cuda = if gpu {
        Cuda::load(0)?
    } else {
        Cuda::emulated()
    };
    let mut on = world.with_device(&cuda, Transfer::Auto)?;
    let dense = cuda.upload(sparsified)?;
    let mut total = cuda.alloc::<f64>(N)?;
    let pairs = cuda.upload(mine)?;
    let mut all_pairs = cuda.alloc::<Bytes<Entry>>(blocks.extent())?;
    let (mut host_total, mut host_pairs) = (vec![0.0f64; N], everyone.to_vec());
    let (mut host_time, mut device_time) = (Duration::ZERO, Duration::ZERO);
    const ITERATIONS: u32 = 20;
    for _ in 0..ITERATIONS {
        world.barrier()?;
        let start = Instant::now();
        world.allreduce(sparsified, &mut host_total, Sum)?;
        world.allgatherv(mine, &mut host_pairs, blocks)?;
        host_time += start.elapsed();
        world.barrier()?;
        let start = Instant::now();
        on.allreduce(&dense, &mut total, Sum)?;
        on.allgatherv(&pairs, &mut all_pairs, blocks)?;
        device_time += start.elapsed();
    }
    let equal = total.to_vec()? == reference && all_pairs.to_vec()? == everyone;
    let mut all_equal = [u8::from(equal)];
    world.allreduce_in_place(&mut all_equal, ferrompi::Min)?;
    if world.rank() == 0 {
        let per = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(ITERATIONS);
        println!(
            "device ({}, {}; {}): allreduce of {N} f64 + allgatherv of the pairs equal to the host's on all ranks: {}; per iteration: host {:.3} ms, device {:.3} ms",
            if cuda.is_emulated() {
                "emulated"
            } else {
                "CUDA"
            },
            support.how,
            if on.is_direct() {
                "direct"
            } else {
                "staged through pinned memory"
            },
            if all_equal[0] == 1 { "OK" } else { "FAILED" },
            per(host_time),
            per(device_time),
        );
    }
    assert!(all_equal[0] == 1, "device results differ from the host's");
    Ok(())
}
