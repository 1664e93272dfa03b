//! Device (CUDA) buffers over an emulated device: every call of `DeviceComm`, direct and staged,
//! gives the host call's result; a bad length is the host call's error with the device buffer
//! untouched; the GPU-awareness query answers; without a driver, `Cuda::load` is an error.
//! With `FERROMPI_EXPECT_GPU=1`, the same calls on a GPU's memory too (or on
//! tests/fake_cuda's stand-in driver, which tools/test.sh runs it with), and the driver's errors.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::gpu::{Cuda, DeviceComm, DeviceMemory, Transfer};
use ferrompi::op::{Max, Sum};
use ferrompi::{Error, Mpi, PROC_NULL, Partition, ProcNull};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let support = t.okay(mpi.gpu_support(), "gpu_support");
    t.ok(
        [
            "MPIX_GPU_query_support",
            "MPIX_Query_cuda_support",
            "the MPI has neither",
            "mpi_memory_alloc_kinds",
        ]
        .iter()
        .any(|query| support.how.starts_with(query)),
        format!("gpu_support says how: {}", support.how),
    );
    // FERROMPI_EXPECT_GPU=1 (on a machine with a GPU): every call again on real device memory,
    // staged, and direct where the MPI takes it.
    if std::env::var_os("FERROMPI_EXPECT_GPU").is_some() {
        let cuda = t.okay(Cuda::load(0), "load the CUDA driver");
        t.ok(!cuda.is_emulated(), "a real device");
        t.err(
            Cuda::load(1 << 20),
            |e| {
                matches!(
                    e.kind(),
                    ErrorKind::Device {
                        operation: "cuDeviceGet",
                        ..
                    }
                )
            },
            "no such device",
        );
        let refused = cuda.alloc::<u8>(1 << 50);
        t.err(
            refused.map(|v| v.len()),
            |e| matches!(e.kind(), ErrorKind::Device { reason, .. } if reason.contains("out of memory")),
            "a petabyte of device memory: the driver's error",
        );
        // A buffer of the GPU handed to an emulated device's communicator: refused, not
        // copied on the host.
        let emulated = Cuda::emulated();
        let mut on_emulated = t.okay(world.with_device(&emulated, Transfer::Auto), "with_device");
        let mut on_gpu = t.okay(cuda.upload(&[1.0f32]), "upload");
        t.err(
            on_emulated.allreduce_in_place(&mut on_gpu, Sum),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "a GPU buffer given to an emulated device",
        );
        t.eq(host(&on_gpu), vec![1.0], "the refused buffer as it was");
        for transfer in [Transfer::Staged, Transfer::Auto] {
            let mut on = t.okay(world.with_device(&cuda, transfer), "with_device");
            t.eq(
                on.is_direct(),
                transfer == Transfer::Auto && support.cuda,
                "direct where the MPI takes it",
            );
            calls(&cuda, &mut on, t);
        }
    } else {
        match Cuda::load(0).as_ref().map_err(ferrompi::Error::kind) {
            Err(ErrorKind::Device { reason, .. }) => {
                t.ok(!reason.is_empty(), "no driver: a reason")
            }
            Err(other) => t.ok(false, format!("Cuda::load without a GPU: {other}")),
            Ok(cuda) => t.ok(!cuda.is_emulated(), "a real driver loaded"),
        }
    }
    let cuda = Cuda::emulated();
    for transfer in [Transfer::Direct, Transfer::Staged, Transfer::Auto] {
        let mut on = t.okay(world.with_device(&cuda, transfer), "with_device");
        t.eq(
            on.is_direct(),
            transfer != Transfer::Staged,
            "direct unless staged (emulated)",
        );
        calls(&cuda, &mut on, t);
    }
}

fn calls(cuda: &Cuda, on: &mut DeviceComm<'_, '_>, t: &mut Checks) {
    let world = on.comm();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let mode = if on.is_direct() { "direct" } else { "staged" };

    // Ring: send right, receive from the left (send first on even ranks).
    let mine: Vec<f64> = (0..5).map(|i| f64::from(rank * 10 + i)).collect();
    let out = t.okay(cuda.upload(&mine), "upload");
    let mut into = t.okay(cuda.alloc::<f64>(5), "alloc");
    let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    if size > 1 {
        if rank % 2 == 0 {
            t.okay(on.send(&out, right, 3), "send");
            t.okay(on.recv(&mut into, left, 3), "recv");
        } else {
            let status = t.okay(on.recv(&mut into, left, 3), "recv");
            t.eq(status.source(), left, "recv status source");
            t.okay(on.send(&out, right, 3), "send");
        }
        let want: Vec<f64> = (0..5).map(|i| f64::from(left * 10 + i)).collect();
        t.eq(host(&into), want, format!("{mode}: ring"));
    } else {
        // A blocking send to oneself may wait for its receive: PROC_NULL instead.
        t.okay(on.send(&out, PROC_NULL, 3), "send to PROC_NULL");
        let status = t.okay(on.recv(&mut into, PROC_NULL, 3), "recv from PROC_NULL");
        t.eq(
            status.source(),
            ProcNull::RANK,
            "status of a PROC_NULL receive",
        );
        t.eq(
            host(&into),
            vec![0.0; 5],
            format!("{mode}: nothing from PROC_NULL"),
        );
    }

    // bcast from the last rank.
    let mut b = t.okay(cuda.upload(&[rank as u32; 3]), "upload");
    t.okay(on.bcast(&mut b, size - 1), "bcast");
    t.eq(
        host(&b),
        vec![(size - 1) as u32; 3],
        format!("{mode}: bcast"),
    );

    // allreduce, in place, with Max; reduce_scatter_block.
    let g = t.okay(cuda.upload(&[1.5f32, f32::from(rank as u8)]), "upload");
    let mut total = t.okay(cuda.alloc::<f32>(2), "alloc");
    t.okay(on.allreduce(&g, &mut total, Sum), "allreduce");
    let ranks_sum = (0..size).sum::<i32>() as f32;
    t.eq(
        host(&total),
        vec![1.5 * size as f32, ranks_sum],
        format!("{mode}: allreduce"),
    );
    let mut highest = t.okay(cuda.upload(&[rank]), "upload");
    t.okay(
        on.allreduce_in_place(&mut highest, Max),
        "allreduce_in_place",
    );
    t.eq(
        host(&highest),
        vec![size - 1],
        format!("{mode}: allreduce_in_place"),
    );
    // Again: the staging buffer is the communicator's, so a call of a size seen allocates
    // nothing on the host.
    let before = crate::allocations();
    t.okay(
        on.allreduce_in_place(&mut highest, Max),
        "allreduce_in_place again",
    );
    t.eq(
        crate::allocations() - before,
        0,
        format!("{mode}: allocations of a repeated call"),
    );
    let blocks: Vec<i64> = (0..2 * n as i64).collect();
    let s = t.okay(cuda.upload(&blocks), "upload");
    let mut part = t.okay(cuda.alloc::<i64>(2), "alloc");
    t.okay(
        on.reduce_scatter_block(&s, &mut part, Sum),
        "reduce_scatter_block",
    );
    let r = rank as i64;
    t.eq(
        host(&part),
        vec![2 * r * n as i64, (2 * r + 1) * n as i64],
        format!("{mode}: reduce_scatter_block"),
    );

    // allgather, allgatherv (rank r sends r + 1 values), alltoall, alltoallv.
    let mut all = t.okay(cuda.alloc::<i32>(2 * n), "alloc");
    let pair = t.okay(cuda.upload(&[rank, -rank]), "upload");
    t.okay(on.allgather(&pair, &mut all), "allgather");
    let want: Vec<i32> = (0..size).flat_map(|r| [r, -r]).collect();
    t.eq(host(&all), want, format!("{mode}: allgather"));
    let lengths: Vec<usize> = (1..=n).collect();
    let parts = t.okay(Partition::<u16>::from_counts(&lengths), "partition");
    let total_len = n * (n + 1) / 2;
    // One value past the blocks, which the call leaves as it was.
    let mut gathered = t.okay(cuda.upload(&vec![999u16; total_len + 1]), "upload");
    let own = t.okay(cuda.upload(&vec![rank as u16; rank as usize + 1]), "upload");
    t.okay(on.allgatherv(&own, &mut gathered, &parts), "allgatherv");
    let mut want: Vec<u16> = (0..n).flat_map(|r| vec![r as u16; r + 1]).collect();
    want.push(999);
    t.eq(host(&gathered), want, format!("{mode}: allgatherv"));
    let to_each: Vec<i32> = (0..size).map(|to| rank * 100 + to).collect();
    let mut swapped = t.okay(cuda.alloc::<i32>(n), "alloc");
    let to_each = t.okay(cuda.upload(&to_each), "upload");
    t.okay(on.alltoall(&to_each, &mut swapped), "alltoall");
    let want: Vec<i32> = (0..size).map(|from| from * 100 + rank).collect();
    t.eq(host(&swapped), want, format!("{mode}: alltoall"));
    // alltoallv: rank r sends (to + 1) values of r to each `to`; receives (r + 1) from each.
    let send_lengths: Vec<usize> = (1..=n).collect();
    let send_parts = t.okay(Partition::<i32>::from_counts(&send_lengths), "partition");
    let send: Vec<i32> = (0..n).flat_map(|to| vec![rank; to + 1]).collect();
    let recv_parts = t.okay(Partition::<i32>::uniform(n, rank as usize + 1), "partition");
    let mut recv = t.okay(cuda.alloc::<i32>(n * (rank as usize + 1)), "alloc");
    let send = t.okay(cuda.upload(&send), "upload");
    t.okay(
        on.alltoallv(&send, &send_parts, &mut recv, &recv_parts),
        "alltoallv",
    );
    let want: Vec<i32> = (0..size)
        .flat_map(|from| vec![from; rank as usize + 1])
        .collect();
    t.eq(host(&recv), want, format!("{mode}: alltoallv"));

    // A buffer another `Cuda` allocated: refused before any copy or communication, in every
    // call that takes one.
    let other = Cuda::emulated();
    let mut foreign = t.okay(other.upload(&[3i32; 4]), "upload");
    let mine = t.okay(cuda.upload(&[3i32; 4]), "upload");
    let refused = |e: &Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    t.err(
        on.bcast(&mut foreign, 0),
        refused,
        format!("{mode}: bcast of a foreign buffer"),
    );
    t.err(
        on.send(&foreign, PROC_NULL, 1),
        refused,
        format!("{mode}: send of a foreign buffer"),
    );
    t.err(
        on.allreduce(&mine, &mut foreign, Sum),
        refused,
        format!("{mode}: allreduce into a foreign buffer"),
    );
    t.eq(
        host(&foreign),
        vec![3; 4],
        format!("{mode}: the foreign buffer as it was"),
    );

    // A receive buffer of the wrong length: the host call's error, before any communication,
    // and the device buffer as it was.
    let mut short = t.okay(cuda.upload(&[7.0f32]), "upload");
    t.err(
        on.allreduce(&g, &mut short, Sum),
        |e| matches!(e.kind(), ErrorKind::BufferSize { .. }),
        format!("{mode}: allreduce into a short buffer"),
    );
    t.eq(
        host(&short),
        vec![7.0],
        format!("{mode}: the short buffer untouched"),
    );
    t.eq(short.len(), 1, "len");
}

/// A device vector's values (an emulated device cannot fail the copy).
fn host<T: ferrompi::Equivalence>(v: &ferrompi::gpu::DeviceVec<'_, T>) -> Vec<T> {
    v.to_vec().expect("to_vec")
}
