//! The binding's own cost: each operation through ferrompi's safe API and the same MPI call made
//! directly through `ffi` (what a C program does), side by side in one run, on one process.
//!
//! `cargo bench --bench overhead` (run it as a singleton, or under `mpirun -n 1`). The
//! MPI-aware multi-rank harness and the C reference programs come with the performance issue.

use criterion::{BenchmarkId, Criterion};
use ferrompi::{Equivalence, Mpi, ffi};
use std::hint::black_box;

fn main() {
    let mpi = Mpi::init().expect("MPI init");
    let world = mpi.world();
    let mut c = Criterion::default().configure_from_args();

    let mut group = c.benchmark_group("bcast_1rank");
    for len in [1usize, 512] {
        let mut buf = vec![1.0f64; len];
        group.bench_function(BenchmarkId::new("ferrompi", len * 8), |b| {
            b.iter(|| world.bcast(black_box(&mut buf), 0).expect("bcast"))
        });
        let count = i32::try_from(len).expect("small");
        group.bench_function(BenchmarkId::new("ffi", len * 8), |b| {
            b.iter(|| {
                // SAFETY: a valid buffer of `count` doubles and the world communicator.
                let rc = unsafe {
                    ffi::MPI_Bcast(
                        black_box(buf.as_mut_ptr()).cast(),
                        count,
                        f64::datatype().as_raw(),
                        0,
                        world.as_raw(),
                    )
                };
                assert_eq!(rc, ffi::MPI_SUCCESS);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("sendrecv_self");
    let send = [7u64; 8];
    let mut recv = [0u64; 8];
    group.bench_function("ferrompi", |b| {
        b.iter(|| {
            world
                .sendrecv(black_box(&send), 0, 1, &mut recv, 0, 1)
                .expect("sendrecv")
        })
    });
    group.bench_function("ffi", |b| {
        b.iter(|| {
            let mut status = ffi::MPI_Status::default();
            // SAFETY: valid buffers of 8 u64 each, the world communicator and a status.
            let rc = unsafe {
                ffi::MPI_Sendrecv(
                    black_box(send.as_ptr()).cast(),
                    8,
                    u64::datatype().as_raw(),
                    0,
                    1,
                    recv.as_mut_ptr().cast(),
                    8,
                    u64::datatype().as_raw(),
                    0,
                    1,
                    world.as_raw(),
                    &mut status,
                )
            };
            assert_eq!(rc, ffi::MPI_SUCCESS);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("barrier_1rank");
    group.bench_function("ferrompi", |b| b.iter(|| world.barrier().expect("barrier")));
    group.bench_function("ffi", |b| {
        b.iter(|| {
            // SAFETY: the world communicator.
            let rc = unsafe { ffi::MPI_Barrier(world.as_raw()) };
            assert_eq!(rc, ffi::MPI_SUCCESS);
        })
    });
    group.finish();
    c.final_summary();
}
