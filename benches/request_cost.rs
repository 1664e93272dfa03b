//! What a request costs through ferrompi beyond the MPI calls themselves, on one process so
//! that no second rank's timing enters: 8 receives and 8 sends to this process and a wait for
//! all, through `scope` + `RequestSet` and through `ffi` on one array of handles, in
//! interleaved rounds (each path first in every other one), reporting the median of the
//! rounds' paired differences per request.
//!
//! `cargo bench --bench request_cost [-- single|funneled|multiple]` (as a singleton, or under
//! `mpirun -n 1`; the level is `funneled` unless named). About 10 seconds; with `--test`, a
//! few rounds that only check it runs. `tools/bench.sh` runs it at `single` and `funneled`.

mod exchange;

use exchange::{Exchange, REQUESTS};
use ferrompi::{Communicator, Mpi, ThreadLevel, ffi};

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
    let mut exchange = Exchange::default();
    let (mut ours, mut theirs, mut paired) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // ferrompi first in even rounds, ffi first in odd ones: neither always has one place.
        let (e, w) = (&mut exchange, &world);
        let (ferrompi, direct) = if round % 2 == 0 {
            let ours = timed(e, w, batches, "ferrompi", Exchange::ferrompi);
            (ours, timed(e, w, batches, "ffi", Exchange::ffi))
        } else {
            let theirs = timed(e, w, batches, "ffi", Exchange::ffi);
            (timed(e, w, batches, "ferrompi", Exchange::ferrompi), theirs)
        };
        let per_request = |seconds: f64| seconds / batches as f64 / REQUESTS as f64 * 1e9;
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

/// Seconds for `batches` exchanges by `path` (one of [`Exchange`]'s), then the check that
/// every receive got its message.
fn timed(
    exchange: &mut Exchange,
    world: &Communicator<'_>,
    batches: usize,
    name: &str,
    path: impl Fn(&mut Exchange, &Communicator<'_>),
) -> f64 {
    let start = ffi_time();
    for _ in 0..batches {
        path(exchange, world);
    }
    let seconds = ffi_time() - start;
    exchange.delivered(name);
    seconds
}

fn ffi_time() -> f64 {
    // SAFETY: MPI is initialised; `MPI_Wtime` has no preconditions beyond that.
    unsafe { ffi::MPI_Wtime() }
}
