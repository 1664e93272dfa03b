//! What a request costs through ferrompi beyond the MPI calls themselves, on one process so
//! that no second rank's timing enters: 8 receives and 8 sends to this process and a wait for
//! all, through `scope` + `RequestSet` and through `ffi` on one array of handles, in
//! interleaved rounds, reporting the median of the rounds' paired differences per request.
//!
//! `cargo bench --bench request_cost [-- single|funneled|multiple]` (as a singleton, or under
//! `mpirun -n 1`; the level is `funneled` unless named). About 10 seconds; with `--test`, a
//! few rounds that only check it runs. `tools/bench.sh` runs it at `single` and `funneled`.

use ferrompi::{Equivalence, Mpi, RequestSet, RequestStorage, ThreadLevel, ffi, scope};
use std::hint::black_box;

const REQUESTS: f64 = 16.0;

fn main() {
    let level = match std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .as_deref()
    {
        Some("single") => ThreadLevel::Single,
        Some("multiple") => ThreadLevel::Multiple,
        _ => ThreadLevel::Funneled,
    };
    let quick = std::env::args().any(|a| a == "--test");
    let (rounds, batches) = if quick { (3, 100) } else { (61, 20_000) };
    let mpi = Mpi::init_thread(level).expect("MPI init");
    let world = mpi.world();
    let me = world.rank();
    let out = [1u8; 8];
    let mut into = [0u8; 64];
    let mut storage = RequestStorage::with_capacity(16);
    let (comm, byte) = (world.as_raw(), u8::datatype().as_raw());
    // SAFETY: an immutable constant defined by the shim.
    let mut requests = [unsafe { ffi::ferrompi_MPI_REQUEST_NULL }; 16];
    let (mut ours, mut theirs, mut paired) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = ffi_time();
        for _ in 0..batches {
            storage = scope(|s| -> ferrompi::Result<RequestStorage> {
                let mut set = RequestSet::from_storage(std::mem::take(&mut storage));
                for (k, chunk) in into.chunks_mut(8).enumerate() {
                    set.push(world.irecv(s, chunk, me, k as i32)?);
                }
                for k in 0..8 {
                    set.push(world.isend(s, &out, me, k)?);
                }
                set.wait_all()?;
                Ok(set.into_storage())
            })
            .expect("exchange");
        }
        let ferrompi = ffi_time() - start;
        delivered(&mut into, "ferrompi");
        let start = ffi_time();
        for _ in 0..batches {
            let (recv, handles) = (into.as_mut_ptr(), requests.as_mut_ptr());
            // SAFETY: 8 bytes of `into` per receive and one handle slot per operation, all
            // alive until the wait for all of them below; `out` is only read.
            unsafe {
                for k in 0..8 {
                    let to = recv.add(8 * k).cast();
                    ffi::MPI_Irecv(to, 8, byte, me, k as i32, comm, handles.add(k));
                }
                for k in 0..8 {
                    let from = out.as_ptr().cast();
                    ffi::MPI_Isend(from, 8, byte, me, k as i32, comm, handles.add(8 + k));
                }
                ffi::MPI_Waitall(16, handles, ffi::ferrompi_MPI_STATUSES_IGNORE);
            }
            black_box(&mut requests);
        }
        let direct = ffi_time() - start;
        delivered(&mut into, "ffi");
        let per_request = |seconds: f64| seconds / batches as f64 / REQUESTS * 1e9;
        ours.push(per_request(ferrompi));
        theirs.push(per_request(direct));
        paired.push(per_request(ferrompi - direct));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{level:?}, ns per request: ferrompi {:.1}, ffi {:.1}, paired difference {:+.1} \
         (median of {rounds} interleaved rounds of {batches} batches of 16)",
        median(&mut ours),
        median(&mut theirs),
        median(&mut paired),
    );
}

/// Checks that every receive got its message (each send carries ones into its own 8 bytes),
/// then clears the buffer for the other path.
fn delivered(into: &mut [u8; 64], path: &str) {
    assert_eq!(*into, [1u8; 64], "{path}: the receives got what was sent");
    into.fill(0);
}

fn ffi_time() -> f64 {
    // SAFETY: MPI is initialised; `MPI_Wtime` has no preconditions beyond that.
    unsafe { ffi::MPI_Wtime() }
}
