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
//! 4. both results are checked against a dense `allreduce` of the same sparsified gradients.
//!
//! Gradient values are multiples of 1/1024, so the sums are exact in any order and the check
//! can demand equality.
//!
//! ```sh
//! tools/run-example.sh topk_sparse_allreduce 4
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
    Ok(())
}
