//! What a request costs through ferrompi beyond the MPI calls themselves, on one process so
//! that no second rank's timing enters: 8 receives and 8 sends to this process and a wait for
//! all, through `scope` + `RequestSet` (each request pushed, and each started straight into the
//! set with `irecv_into`/`isend_into`) and through `ffi` on one array of handles, in
//! interleaved rounds (the paths' order rotating from round to round), reporting the median of
//! the rounds' paired differences per request.
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
    let mut per_path: [Vec<f64>; 3] = Default::default();
    let (mut paired_push, mut paired_into) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // The order rotates from round to round: no path always has one place. Each path is
        // its own function item, so `timed` inlines it into its loop.
        let mut seconds = [0.0; 3];
        let (e, w) = (&mut exchange, &world);
        for k in 0..3 {
            let which = (round + k) % 3;
            seconds[which] = match which {
                0 => timed(e, w, batches, "ferrompi", Exchange::ferrompi),
                1 => timed(e, w, batches, "into", Exchange::ferrompi_into),
                _ => timed(e, w, batches, "ffi", Exchange::ffi),
            };
        }
        let per_request = |seconds: f64| seconds / batches as f64 / REQUESTS as f64 * 1e9;
        for (times, s) in per_path.iter_mut().zip(seconds) {
            times.push(per_request(s));
        }
        paired_push.push(per_request(seconds[0] - seconds[2]));
        paired_into.push(per_request(seconds[1] - seconds[2]));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [push, into, direct] = &mut per_path;
    println!(
        "{level:?}, ns per request: ferrompi {:.1} (pushed) / {:.1} (started into the set), \
         ffi {:.1}, paired difference {:+.1} / {:+.1} \
         (median of {rounds} interleaved rounds of {batches} batches of 16)",
        median(push),
        median(into),
        median(direct),
        median(&mut paired_push),
        median(&mut paired_into),
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
