//! The registered multi-rank programs. Each file here must appear in [`ALL`]; the driver checks.

mod asan_canary;
mod async_p2p;
mod async_thread_limit;
mod bcast;
mod cartesian;
mod channel;
mod collectives;
mod communicator;
mod conformance;
mod derived;
#[cfg(feature = "cuda")]
mod device;
mod environment;
mod error_abort;
mod error_return;
mod errors;
mod file_io;
mod file_limits;
mod group;
mod large_count;
mod leak_abort;
mod leak_warning;
mod leaked_objects;
mod multinode;
mod neighborhood;
mod nonblocking;
mod op_panic;
mod p2p;
mod panic_abort;
mod persistent_collectives;
mod persistent_p2p;
mod probe;
mod reductions;
mod rma;
mod send_modes;
mod shared_window;
mod small_shm;
mod soundness;
mod threads;
mod topology;
#[cfg(feature = "serde")]
mod typed;
mod watchdog_quiet;
mod watchdog_stop;
mod watchdog_threads;
mod window_agreement;

use crate::{Expect, Program};

/// Programs that are a whole `main`, as a user writes it: they initialise and finalize MPI
/// themselves and return `main`'s `Result` (the driver prints an `Err` and exits 1, as Rust's
/// `main` does). Their registrations' `run` is [`runs_as_main`].
pub const MAINS: &[(&str, Main)] = &[
    ("error_return", error_return::main),
    ("watchdog_stop", watchdog_stop::main),
    ("watchdog_quiet", watchdog_quiet::main),
    ("watchdog_threads", watchdog_threads::main),
];

/// A program's `main`.
pub type Main = fn() -> Result<(), ferrompi::Error>;

/// The `run` of a program in [`MAINS`]: never called.
fn runs_as_main(_: &ferrompi::Mpi, _: &mut crate::checks::Checks) {
    unreachable!("a program of MAINS runs as its own main");
}

/// Program files that this build cannot run, with the reason; the driver reports them as SKIP
/// lines instead of failing registration.
pub const UNAVAILABLE: &[(&str, &str)] = &[
    #[cfg(not(feature = "serde"))]
    ("typed", "needs --features serde (tools/test.sh enables it)"),
    #[cfg(not(feature = "cuda"))]
    ("device", "needs --features cuda (tools/test.sh enables it)"),
];
use ferrompi::ThreadLevel;

const RANKS: &[u32] = &[1, 2, 3, 4];

/// Programs the driver runs with a tmpfs of this many MiB of their own mounted at this path (a
/// mount namespace per run, made with `unshare`; as root only, and skipped with the reason
/// elsewhere). The path is in the ranks' `FERROMPI_SMALL_TMPFS`.
pub const IN_SMALL_TMPFS: &[(&str, &str, u64)] = &[
    ("small_shm", "/dev/shm", small_shm::MIB),
    ("file_limits", "/mnt", file_limits::MIB),
];

/// Every program the driver runs.
pub const ALL: &[Program] = &[
    Program {
        name: "derived",
        file: "derived",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: derived::run,
    },
    Program {
        name: "window_agreement",
        file: "window_agreement",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: window_agreement::run,
    },
    Program {
        name: "leaked_objects",
        file: "leaked_objects",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::PassWith(
            "3 window(s), 1 persistent request(s), 1 communicator(s), 1 group(s), 1 info object(s) never freed",
        ),
        slow: false,
        run: leaked_objects::run,
    },
    Program {
        name: "small_shm",
        file: "small_shm",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: small_shm::run,
    },
    Program {
        name: "soundness",
        file: "soundness",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        // The windows dropped on a refused thread (`refused_threads_leak_window_vectors`),
        // which finalize frees.
        expect: Expect::PassWith("1 window(s) never freed"),
        slow: false,
        run: soundness::run,
    },
    Program {
        name: "conformance",
        file: "conformance",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: conformance::run,
    },
    Program {
        name: "error_abort",
        file: "error_abort",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::AbortWith(
            "allreduce: buffer has 2 elements, 1 needed; aborting the MPI job",
        ),
        slow: false,
        run: error_abort::run,
    },
    Program {
        name: "error_return",
        file: "error_return",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::AbortWith(
            "allreduce: buffer has 2 elements, 1 needed (an error alive as Mpi drops); \
             aborting the MPI job",
        ),
        slow: false,
        run: runs_as_main,
    },
    Program {
        name: "watchdog_stop",
        file: "watchdog_stop",
        level: ThreadLevel::Funneled,
        // One rank has no peer to wait for.
        ranks: &[2, 3, 4],
        singleton: false,
        // The limit (2 s) and 5 s, plus up to 5 s for the launcher to start the ranks.
        expect: Expect::AbortWithin("watchdog: barrier on \"solver\" (", 12),
        slow: false,
        run: runs_as_main,
    },
    Program {
        name: "watchdog_quiet",
        file: "watchdog_quiet",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: runs_as_main,
    },
    Program {
        name: "watchdog_threads",
        file: "watchdog_threads",
        level: ThreadLevel::Multiple,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: runs_as_main,
    },
    Program {
        name: "leak_warning",
        file: "leak_warning",
        level: ThreadLevel::Funneled,
        ranks: &[1, 2],
        singleton: false,
        expect: Expect::PassWith("were leaked (mem::forget) while in flight"),
        slow: false,
        run: leak_warning::run,
    },
    Program {
        name: "soundness_serialized",
        file: "soundness",
        level: ThreadLevel::Serialized,
        ranks: &[1, 2],
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: soundness::run,
    },
    Program {
        name: "soundness_multiple",
        file: "soundness",
        level: ThreadLevel::Multiple,
        ranks: &[1, 2],
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: soundness::run,
    },
    Program {
        name: "environment",
        file: "environment",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: environment::run,
    },
    Program {
        name: "errors",
        file: "errors",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: errors::run,
    },
    Program {
        name: "communicator",
        file: "communicator",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: communicator::run,
    },
    Program {
        name: "cartesian",
        file: "cartesian",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: cartesian::run,
    },
    Program {
        name: "file_io",
        file: "file_io",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: file_io::run,
    },
    Program {
        name: "file_limits",
        file: "file_limits",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: file_limits::run,
    },
    Program {
        name: "neighborhood",
        file: "neighborhood",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: neighborhood::run,
    },
    Program {
        name: "group",
        file: "group",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: group::run,
    },
    Program {
        name: "p2p",
        file: "p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: p2p::run,
    },
    Program {
        name: "send_modes",
        file: "send_modes",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: send_modes::run,
    },
    Program {
        name: "probe",
        file: "probe",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: probe::run,
    },
    Program {
        name: "nonblocking",
        file: "nonblocking",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: nonblocking::run,
    },
    Program {
        name: "async_p2p",
        file: "async_p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: async_p2p::run,
    },
    Program {
        name: "async_thread_limit",
        file: "async_thread_limit",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: async_thread_limit::run,
    },
    Program {
        name: "async_single",
        file: "async_p2p",
        level: ThreadLevel::Single,
        ranks: &[1, 2, 3],
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: async_p2p::run,
    },
    Program {
        name: "channel",
        file: "channel",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: channel::run,
    },
    #[cfg(feature = "cuda")]
    Program {
        name: "device",
        file: "device",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: device::run,
    },
    #[cfg(feature = "serde")]
    Program {
        name: "typed",
        file: "typed",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: typed::run,
    },
    Program {
        name: "persistent_p2p",
        file: "persistent_p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: persistent_p2p::run,
    },
    Program {
        name: "shared_window",
        file: "shared_window",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: shared_window::run,
    },
    Program {
        name: "rma",
        file: "rma",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: rma::run,
    },
    Program {
        // At `Serialized` an epoch holds no pass of the thread gate, so every call must take
        // the full check and the gate's lock, never the fast path (which takes the pass with
        // `unwrap_unchecked`: the debug build checks it).
        name: "rma_serialized",
        file: "rma",
        level: ThreadLevel::Serialized,
        ranks: &[1, 2, 3],
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: rma::run,
    },
    Program {
        name: "multinode",
        file: "multinode",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: multinode::run,
    },
    Program {
        name: "topology",
        file: "topology",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: topology::run,
    },
    Program {
        name: "bcast",
        file: "bcast",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: bcast::run,
    },
    Program {
        name: "collectives",
        file: "collectives",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: collectives::run,
    },
    Program {
        name: "reductions",
        file: "reductions",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: reductions::run,
    },
    Program {
        name: "persistent_collectives",
        file: "persistent_collectives",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        slow: false,
        run: persistent_collectives::run,
    },
    Program {
        name: "large_count",
        file: "large_count",
        level: ThreadLevel::Funneled,
        ranks: &[2], // one such test: up to about 15 GB in all
        singleton: false,
        expect: Expect::Pass,
        slow: true,
        run: large_count::run,
    },
    Program {
        name: "threads_funneled",
        file: "threads",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: threads::run,
    },
    Program {
        name: "threads_serialized",
        file: "threads",
        level: ThreadLevel::Serialized,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: threads::run,
    },
    Program {
        name: "threads_multiple",
        file: "threads",
        level: ThreadLevel::Multiple,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        slow: false,
        run: threads::run,
    },
    Program {
        name: "panic_abort",
        file: "panic_abort",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::AbortWith("deliberate panic from the last rank"),
        slow: false,
        run: panic_abort::run,
    },
    Program {
        name: "op_panic",
        file: "op_panic",
        level: ThreadLevel::Funneled,
        ranks: &[2, 4], // with one rank MPI never calls the op
        singleton: false,
        expect: Expect::AbortWith("deliberate panic in a user op"),
        slow: false,
        run: op_panic::run,
    },
    Program {
        name: "leak_abort",
        file: "leak_abort",
        level: ThreadLevel::Funneled,
        ranks: &[1, 2],
        singleton: false,
        expect: Expect::AbortWith("leaked (mem::forget) and still in flight"),
        slow: false,
        run: leak_abort::run,
    },
    Program {
        name: "leak_abort_set",
        file: "leak_abort",
        level: ThreadLevel::Funneled,
        ranks: &[1],
        singleton: false,
        expect: Expect::AbortWith("leaked (mem::forget) and still in flight"),
        slow: false,
        run: leak_abort::run_set,
    },
    Program {
        name: "asan_canary",
        file: "asan_canary",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::CaughtByAsan("ERROR: AddressSanitizer: stack-buffer-overflow"),
        slow: false,
        run: asan_canary::run,
    },
];
