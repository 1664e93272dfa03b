//! The registered multi-rank programs. Each file here must appear in [`ALL`]; the driver checks.

mod async_p2p;
mod bcast;
mod channel;
mod collectives;
mod communicator;
mod environment;
mod errors;
mod group;
mod large_count;
mod leak_abort;
mod nonblocking;
mod op_panic;
mod p2p;
mod panic_abort;
mod persistent_collectives;
mod persistent_p2p;
mod probe;
mod reductions;
mod send_modes;
mod threads;
#[cfg(feature = "serde")]
mod typed;

use crate::{Expect, Program};

/// Program files that this build cannot run, with the reason; the driver reports them as SKIP
/// lines instead of failing registration.
pub const UNAVAILABLE: &[(&str, &str)] = &[
    #[cfg(not(feature = "serde"))]
    ("typed", "needs --features serde (tools/test.sh enables it)"),
];
use ferrompi::ThreadLevel;

const RANKS: &[u32] = &[1, 2, 4];

/// Every program the driver runs.
pub const ALL: &[Program] = &[
    Program {
        name: "environment",
        file: "environment",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        run: environment::run,
    },
    Program {
        name: "errors",
        file: "errors",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: errors::run,
    },
    Program {
        name: "communicator",
        file: "communicator",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: communicator::run,
    },
    Program {
        name: "group",
        file: "group",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: group::run,
    },
    Program {
        name: "p2p",
        file: "p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        run: p2p::run,
    },
    Program {
        name: "send_modes",
        file: "send_modes",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: send_modes::run,
    },
    Program {
        name: "probe",
        file: "probe",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: probe::run,
    },
    Program {
        name: "nonblocking",
        file: "nonblocking",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        run: nonblocking::run,
    },
    Program {
        name: "async_p2p",
        file: "async_p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: async_p2p::run,
    },
    Program {
        name: "channel",
        file: "channel",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: channel::run,
    },
    #[cfg(feature = "serde")]
    Program {
        name: "typed",
        file: "typed",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: typed::run,
    },
    Program {
        name: "persistent_p2p",
        file: "persistent_p2p",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: persistent_p2p::run,
    },
    Program {
        name: "bcast",
        file: "bcast",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: bcast::run,
    },
    Program {
        name: "collectives",
        file: "collectives",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: collectives::run,
    },
    Program {
        name: "reductions",
        file: "reductions",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: reductions::run,
    },
    Program {
        name: "persistent_collectives",
        file: "persistent_collectives",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: true,
        expect: Expect::Pass,
        run: persistent_collectives::run,
    },
    Program {
        name: "large_count",
        file: "large_count",
        level: ThreadLevel::Funneled,
        ranks: &[2], // one such test: about 2 GiB per rank
        singleton: false,
        expect: Expect::Pass,
        run: large_count::run,
    },
    Program {
        name: "threads_funneled",
        file: "threads",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: threads::run,
    },
    Program {
        name: "threads_serialized",
        file: "threads",
        level: ThreadLevel::Serialized,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: threads::run,
    },
    Program {
        name: "threads_multiple",
        file: "threads",
        level: ThreadLevel::Multiple,
        ranks: RANKS,
        singleton: false,
        expect: Expect::Pass,
        run: threads::run,
    },
    Program {
        name: "panic_abort",
        file: "panic_abort",
        level: ThreadLevel::Funneled,
        ranks: RANKS,
        singleton: false,
        expect: Expect::AbortWith("deliberate panic from the last rank"),
        run: panic_abort::run,
    },
    Program {
        name: "op_panic",
        file: "op_panic",
        level: ThreadLevel::Funneled,
        ranks: &[2, 4], // with one rank MPI never calls the op
        singleton: false,
        expect: Expect::AbortWith("deliberate panic in a user op"),
        run: op_panic::run,
    },
    Program {
        name: "leak_abort",
        file: "leak_abort",
        level: ThreadLevel::Funneled,
        ranks: &[1, 2],
        singleton: false,
        expect: Expect::AbortWith("leaked (mem::forget) and still in flight"),
        run: leak_abort::run,
    },
];
