//! # ferrompi
//!
//! Safe, idiomatic and zero-overhead access to MPI for Rust programs launched by `mpirun`,
//! `mpiexec` or Slurm's `srun`.
//!
//! ```no_run
//! use ferrompi::Mpi;
//!
//! let mpi = Mpi::init()?;
//! let world = mpi.world();
//! let mut data = [0.0f64; 4];
//! if world.rank() == 0 {
//!     data = [1.0, 2.0, 3.0, 4.0];
//! }
//! world.bcast(&mut data, 0)?;
//! assert_eq!(data[3], 4.0);
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! The [`guide`] walks through the crate chapter by chapter (getting started, threads,
//! nonblocking and persistent operations, collectives, topologies, windows, deployment on
//! clusters, errors, building against your MPI, migrating from rsmpi).
//!
//! ## What is here
//!
//! | module | MPI-4.0 | what |
//! |---|---|---|
//! | [`ffi`] | all | bindgen bindings of the installed `mpi.h`, and the constants shim |
//! | [`env`](mod@env) | ch. 9, 11 | [`Mpi`]: init with a [`ThreadLevel`], finalize on drop, [`Launcher`] |
//! | [`error`] | §9.3, §9.4 | [`Error`], [`ErrorClass`] |
//! | [`datatype`] | §3.2.2, §5.1, §5.2 | [`Equivalence`] and `#[derive(Equivalence)]`: which Rust types travel, as what; [`DerivedType`] layouts, views, packing |
//! | [`comm`] | ch. 7 | [`Communicator`], [`Group`]: dup, split, split_type, compare, names, range_incl |
//! | [`comm::cart`] | §8.5 | [`CartCommunicator`]: `dims_create`, `cart_create`, `coords`, `rank_of`, `shift`, `cart_sub`, `cart_map`; `topo_test` |
//! | [`comm::graph`] | §8.5.3, §8.5.4 | [`GraphCommunicator`] (`graph_create`, `graph_map`, `neighbors`), [`DistGraphCommunicator`] (`dist_graph_create_adjacent`, `dist_graph_create`, weights) |
//! | [`comm::neighbor`] | §8.6–§8.8 | [`TopologyCommunicator`]: `neighbor_allgather(v)`, `neighbor_alltoall(v, w)`, blocking, nonblocking and persistent |
//! | [`comm::p2p`] | ch. 3 | `send`, `ssend`, `bsend`, `rsend`, `recv`, `sendrecv(_replace)`, [`Status`] |
//! | [`comm::probe`] | §3.8 | `probe`, `mprobe`, [`Message`], `recv_vec`, `recv_uninit` |
//! | [`comm::nonblocking`] | §3.7, §3.10 | `isend`, `issend`, `ibsend`, `irsend`, `irecv` (scoped or owned), `isendrecv(_replace)` |
//! | [`comm::persistent`] | §3.9 | `send_init`, `ssend_init`, `bsend_init`, `rsend_init`, `recv_init` → [`PersistentRequest`] |
//! | [`comm::persistent_collective`] | §6.13 | `barrier_init`, `allreduce_init`, … ([`inits`](comm::persistent_collective::inits)) → [`PersistentRequest`] (MPI-4, Open MPI's `MPIX_`, or emulated) |
//! | [`request`] | §3.7–§3.9 | [`scope`], [`Request`], [`OwnedRequest`], [`RequestSet`], [`OwnedSet`], futures, `get_status` |
//! | [`channel`] | ch. 3, 7 | [`Channel`]: a private link to one peer |
//! | `comm::typed` (feature `serde`) | — | `send_value`, `recv_value`, `recv_value_async` |
//! | [`comm::collective`] | ch. 6 | every collective, blocking, in place and nonblocking: [`barrier_bcast`](comm::collective::barrier_bcast), [`reduce`](comm::collective::reduce), [`gather_scatter`](comm::collective::gather_scatter), [`vector`](comm::collective::vector) (the v-variants) |
//! | [`comm::collective::in_place`] | §6.12 | the nonblocking in-place collectives (`ireduce_in_place`, `igatherv_in_place`, …) |
//! | [`op`] | §6.9 | predefined reduction ops, typed; [`UserOp`] from closures; `reduce_local`, `is_commutative` |
//! | [`comm::agreement`] | ch. 6 | checked collectives: arguments verified across ranks |
//! | [`comm::partition`] | ch. 6 | [`Partition`]: per-rank blocks for the v-collectives |
//! | [`info`] | ch. 10 | [`Info`]: hints for windows and communicators |
//! | [`window::shared`] | §12.2.3, §12.7 | [`SharedWindow`]: one copy per node, read and write epochs, atomics |
//! | [`window::rma`], [`window::epoch`], [`window::epoch_target`] | ch. 12 | [`Window`]: put, get, accumulate, atomics, `rput`/`rget`; fence, PSCW, lock epochs; one target checked once |
//! | [`io`] | ch. 14 | [`File`](io::File): parallel I/O; open, views (subarray, darray, `external32`), reads and writes at explicit offsets and through file pointers, blocking, nonblocking and split collective |
//! | [`topology`] | §7.4.2 | [`Hierarchy`](topology::Hierarchy): node, leaders, NUMA groups, hosts, a node-aware Cartesian grid; [`Placement`](topology::Placement): NUMA binding from Linux; `split_numa` |
//! | [`slurm`] | §11.5 | [`SlurmJob`](slurm::SlurmJob): the allocation from `SLURM_*`; hostlist and count parsers |
//!
//! Which MPI the crate was built against: [`IMPLEMENTATION`], [`MPI_VERSION`], [`BUILD_PROBE`].
//!
//! ## Layers
//!
//! Each module imports only from the layers below it (and a child from its parent); no two
//! modules import each other, directly or in a circle (`tools/module-cycles.py` checks it in
//! the test suite):
//!
//! ```text
//!  channel   window (shared, rma, epoch, epoch_target, exposure)   topology   slurm  what programs build on
//!     |      io (File; view, access, nonblocking, split, diagnose)    |         |
//!     |         |                                                     |         |
//!  comm: p2p, probe, nonblocking, persistent, bsend,             the operations of a
//!        collective/ (barrier_bcast, reduce, gather_scatter,     communicator, each family
//!        vector, in_place), persistent_collective/ (inits),      in its own module
//!        group, typed, view (layouts, packing)
//!     |
//!  comm: large (large counts), partition, agreement, call        what they share: MPI calls
//!     |                                                           named once, blocks, checks
//!  comm (Communicator)   request (scopes, requests, persistent)   handles and their requests
//!     |
//!  status   op   info                                             values MPI fills or reads
//!     |
//!  datatype (Equivalence, derived types, views, packing)           the types
//!     |
//!  env (Mpi, enter)                                               the environment
//!     |
//!  error (Error, check)                                           return codes to errors
//!     |
//!  gate (thread gate, ThreadLevel, process state)                 may MPI be called now?
//!  live (the MPI objects alive, for finalize)                     what did a program leak?
//!  launcher (Launcher, Pmi: from environment variables)           who started this process?
//!     |
//!  ffi (bindgen bindings, constants shim)                         the raw layer
//! ```
//!
//! ## Thread safety
//!
//! | type | `Send` | `Sync` | why |
//! |---|---|---|---|
//! | [`Mpi`] | no | yes | finalized on the thread that initialised MPI |
//! | [`Communicator`] | yes | yes | every call passes the thread gate |
//! | [`Group`] | yes | yes | every call passes the thread gate |
//! | [`Status`], [`Datatype`] | yes | yes | plain data, immutable committed handles |
//! | [`DerivedType`] | yes | yes | immutable once committed; freed behind the thread gate |
//! | [`View`], [`ViewMut`], [`Blocks`], [`BlocksMut`], [`LayoutBlocks`], [`LayoutBlocksMut`] | no | no | borrows of a buffer for one call or scope |
//! | [`OwnedRequest`], [`PersistentRequest`] | yes | yes | calls gated; buffers are `Send` |
//! | [`Scope`], [`Request`], [`RequestSet`] | no | no | tied to their [`scope`]'s thread |
//! | [`Message`] | yes | yes | `&Message` reads only its status |
//! | [`Channel`], [`AttachedBuffer`] | yes | yes | as [`Communicator`] |
//! | [`Info`] | yes | yes | as [`Communicator`]; changes need `&mut` |
//! | [`SharedWindow`], [`Window`] | yes | yes | epochs need `&mut` (shared) or are serialised per process (RMA) |
//! | [`WindowEpoch`](window::WindowEpoch), [`EpochTarget`](window::EpochTarget) | no | no | tied to the thread that opened the epoch |
//! | [`File`](io::File) | yes | yes | every call passes the thread gate; a new view needs `&mut` |
//! | [`SplitCollective`](io::SplitCollective) | yes | yes | owns its buffer; ended behind the thread gate |
//!
//! These hold whatever the implementation's handle representation (pointers in Open MPI,
//! integers in MPICH); a compile-time assertion checks every public type's traits, both ways,
//! so that none follows the representation.
//!
//! The *thread gate* makes the handles sound at every thread level MPI may provide: below
//! `MPI_THREAD_SERIALIZED`, calls from a thread other than the initialising one return
//! [`ErrorKind::WrongThread`]; at `SERIALIZED` they take a process-wide lock; at `MULTIPLE` they go
//! straight through. See [`env`](mod@env).
//!
//! ## Soundness model
//!
//! What the crate guarantees to safe code, whatever it does:
//!
//! - **Nothing outlives finalize.** Every handle borrows [`Mpi`]; MPI is finalized when `Mpi`
//!   drops, on its own thread. What can outlive it (a [`Status`], [`check`]) never calls MPI
//!   outside its lifetime: it returns [`ErrorKind::AlreadyFinalized`] or a message saying why MPI
//!   was not asked.
//! - **Every MPI call passes the thread gate** ([`env`](mod@env)): before initialisation, after
//!   finalize, from a thread the provided level does not allow, or from inside a user-defined
//!   reduction (where MPI forbids MPI calls), the call returns an [`Error`] without reaching
//!   MPI. At `Serialized` an error lookup inside a gated call does not take the lock twice.
//!   Where an object cannot leave its thread, outlive [`Mpi`] or be reached from a callback (a
//!   [`Scope`], a [`WindowEpoch`](window::WindowEpoch)), the test is made once when it is
//!   created, for every point-to-point start in the scope and every call in the epoch.
//! - **No unchecked input reaches MPI.** Ranks, roots, tags and counts are checked before the call
//!   ([`ErrorKind::InvalidRank`], [`ErrorKind::InvalidTag`], [`ErrorKind::CountOverflow`], with
//!   lengths multiplied without wrapping), and `MPI_ERRORS_RETURN` is installed on every communicator,
//!   so MPI's own checks come back as [`ErrorKind::Mpi`] instead of aborting.
//! - **Nonblocking buffers outlive their operations**, even under `mem::forget`: owned buffers
//!   are leaked with a leaked request; borrowed ones belong to a [`scope`] that aborts rather
//!   than return while a leaked operation is in flight. See [`request`].
//! - **A buffer MPI may still write is never reachable.** A request hands its buffer back only
//!   once its operation completed; if the thread gate refuses to complete it (a thread the level
//!   does not allow), it panics with the reason rather than hand the buffer out, and leaks it.
//!   `Debug` of a request or an attached buffer never reads the buffer.
//! - **Buffers are typed.** A buffer is a slice of an [`Equivalence`] type, whose contract says
//!   exactly how many MPI elements it is; counts are derived from the slice, so MPI cannot read
//!   or write past it. Receives repair values whose bit patterns could be invalid (`bool`).
//! - **User-defined reductions see only valid values in memory they may use.** A [`UserOp`]'s
//!   closure never writes the input side (MPI may pass the caller's send buffer, even read-only
//!   memory), and gets aligned copies where MPI's buffers are not dense, aligned values of `T`
//!   (see [`op`]).
//! - **Memory other processes reach is referenced only when no one can be writing it.** A
//!   [`SharedWindow`] hands out `&[T]`/`&mut [T]` only inside collective epochs that every
//!   process of the node has announced identically (checked in the window's own memory, so a
//!   disagreement is [`ErrorKind::EpochMismatch`], not a race); an RMA [`Window`]'s memory is never
//!   referenced from Rust while the window exists, and its epochs are closures that complete
//!   before their buffers come back; a vector it owns is freed only after `MPI_Win_free`
//!   succeeded, and leaked where it cannot (a drop on a thread the level refuses). See
//!   [`window`].
//! - **Crate-internal entry points are sealed by type, not by documentation**: the methods of
//!   [`Persistent`] take a token only the crate can make.
//! - **Handles are freed once.** Created communicators and groups are freed on drop (or by an
//!   explicit `free`), predefined ones never.
//! - **A panicking rank ends the job** (`MPI_Abort`) instead of leaving the others blocked, unless
//!   turned off with [`InitOptions::abort_on_panic`]. **An error does not**: a rank that returns
//!   an `Err` early leaves the others blocked in their next collective, and its `Mpi` blocks in
//!   `MPI_Finalize`. Run the program body through [`run`] (or [`InitOptions::run`], or wrap a
//!   call in [`Mpi::or_abort`]) to make an error end the job at once with its message.
//!
//! What MPI itself can still do, and how the crate contains it:
//!
//! - **Open MPI's single-copy path writes past a short receive buffer** (4.1.4 and 5.0.11,
//!   ranks on one node). ferrompi turns that path off at initialisation unless the user set
//!   its parameter; [`InitOptions::allow_open_mpi_single_copy`] is the `unsafe` opt-out. See
//!   [`env`](mod@env#open-mpi-long-messages-into-short-buffers).
//! - **Collectives whose ranks pass mismatched lengths or roots** are erroneous programs that
//!   MPI need not detect: blocking ones usually fail with [`ErrorClass::Truncate`], but
//!   nonblocking ones crashed Open MPI 4.1 and hung MPICH 4.0 here. Checked mode
//!   ([`InitOptions::check_collectives`]) verifies agreement first and returns
//!   [`ErrorKind::CollectiveMismatch`] on every rank; see [`comm::agreement`].
//! - **A leaked operation that never completes** (a `mem::forget` of an owned pending send) is
//!   never freed under MPI, but MPI may wait for it: MPICH's `MPI_Finalize` hangs on such a send.
//!   Finalize prints a warning when it knows of leaked operations.
//! - **MPI objects leaked** (`mem::forget` of a window, communicator, group, info or
//!   user-defined op, or a window dropped on a thread the level refuses) stay with MPI until
//!   finalize, where MPICH over UCX aborts over a window's still-registered memory. Finalize
//!   says what was leaked and frees the leaked windows first, collectively, oldest first.
//! - **Checks one rank alone would fail before a collective call** would leave the others
//!   waiting in it. Making a window is preceded by an exchange of every rank's length (and,
//!   for a [`SharedWindow`], of the free room of the node's shared memory), so a size one rank
//!   cannot allocate is the same error on every rank; a shared segment the kernel cannot back
//!   is [`ErrorKind::NoMemory`] on every rank, agreed before any byte is stored (not `SIGBUS`); a
//!   fence makes the same MPI calls on every rank, since nothing but fences changes its
//!   sequence.
//! - **Erroneous programs MPI defines as such** (a receive matched by a message of another
//!   type, a program that deadlocks) stay erroneous; ferrompi makes them fail in MPI, never in
//!   Rust's memory model.

// docs.rs (`[package.metadata.docs.rs]`): mark what needs a feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The build's own cfgs (what the installed MPI offers) are described in the items' docs.
#![cfg_attr(docsrs, doc(auto_cfg(hide(ferrompi_mpi4, ferrompi_c_bool))))]

pub mod channel;
pub mod comm;
pub mod datatype;
pub mod env;
pub mod error;
mod fault;
pub mod ffi;
mod gate;
pub mod gpu;
#[cfg(any(doc, doctest))]
pub mod guide;
pub mod info;
pub mod io;
mod launcher;
mod live;
pub mod op;
pub mod request;
pub mod slurm;
mod status;
pub mod topology;
pub mod window;

pub use channel::Channel;
pub use comm::bsend::{AttachedBuffer, BSEND_OVERHEAD};
pub use comm::cart::{CartCommunicator, Shift, VirtualTopology};
pub use comm::graph::{DistGraphCommunicator, GraphCommunicator};
pub use comm::group::Group;
pub use comm::neighbor::TopologyCommunicator;
pub use comm::p2p::{ANY_SOURCE, ANY_TAG, Destination, PROC_NULL, ProcNull, Source, TagMatch};
pub use comm::partition::{Partition, TypedBlock, TypedPartition};
pub use comm::persistent_collective::{
    PersistentCollectives, persistent_collectives, set_persistent_emulation,
};
pub use comm::probe::Message;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use comm::typed::RecvValue;
pub use comm::{Communicator, Comparison, HwResource, OpenMpiLocality, SplitType};
pub use datatype::{
    Blocks, BlocksMut, Bounds, Bytes, Datatype, DerivedType, Distribution, Elementwise,
    Equivalence, LayoutBlock, LayoutBlocks, LayoutBlocksMut, Order, View, ViewMut,
};
/// `#[derive(Equivalence)]` for structs (feature `derive`, on by default): see
/// [`Equivalence`] and [`datatype`]'s "Structured data".
#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use ferrompi_derive::Equivalence;

// The derive's expansion names `::ferrompi`, which the crate's own tests use too.
extern crate self as ferrompi;
pub use env::{InitOptions, Launcher, Mpi, Pmi, ThreadLevel};
pub use error::{Error, ErrorClass, ErrorKind, ParseError, Result, check};
pub use info::Info;
pub use status::Status;
pub use window::{LockType, SharedWindow, Window};

/// Initialises MPI with the defaults of [`Mpi::init`], runs `body`, and finalizes; an error
/// ends the whole job at once with its message (see [`InitOptions::run`]). The one-line way to
/// make an error on one rank end the job instead of hanging it:
///
/// ```no_run
/// ferrompi::run(|mpi| {
///     mpi.world().barrier()?;
///     Ok::<(), ferrompi::Error>(())
/// });
/// ```
pub fn run<E: std::fmt::Display>(body: impl FnOnce(&Mpi) -> std::result::Result<(), E>) {
    Mpi::builder().run(body)
}
pub use op::{
    AccumulateOp, BitAnd, BitOr, BitXor, Loc, LogicalAnd, LogicalOr, LogicalXor, Max, MaxLoc, Min,
    MinLoc, NoOp, Op, OwnedOp, Prod, Replace, Sum, UserOp,
};
pub use request::{
    Active, ActiveAll, ActiveSet, Buffers, NoBuffer, OwnedBlocks, OwnedBuffer, OwnedLayoutBlocks,
    OwnedRequest, OwnedSet, OwnedView, Pair, Persistent, PersistentRequest, Request, RequestSet,
    RequestStorage, Scope, scope, start_all,
};

/// Converts an integer constant of the generated bindings to `c_int`, checked at compile time.
///
/// bindgen types `#define` constants as `i32` but Open MPI's anonymous-enum constants
/// (`MPI_IDENT`, `MPI_THREAD_*`, `MPI_TAG_UB`, …) as `c_uint`; this gives both one type without a
/// run-time conversion, and fails the build if a value does not fit.
macro_rules! c_int_const {
    ($value:expr) => {{
        const VALUE: i128 = $value as i128;
        const _: () = assert!(
            VALUE >= ::std::ffi::c_int::MIN as i128 && VALUE <= ::std::ffi::c_int::MAX as i128,
            "MPI constant does not fit a C int"
        );
        VALUE as ::std::ffi::c_int
    }};
}
pub(crate) use c_int_const;

/// MPI implementation families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Implementation {
    /// Open MPI.
    OpenMpi,
    /// MPICH or a derivative (Intel MPI, Cray MPICH, MVAPICH).
    Mpich,
    /// The MPI-5 standard ABI (`mpi_abi.h`, `libmpi_abi.so`, MPICH 5's `mpicc_abi`): the crate
    /// knows no implementation at build time; the library loaded at run time is one whose ABI
    /// matches, and [`Mpi::library_version`] names it.
    StandardAbi,
    /// Another implementation.
    Other,
}

/// The family's usual name: `Open MPI`, `MPICH`, `MPI-5 ABI`, `MPI`.
///
/// ```
/// assert_eq!(ferrompi::Implementation::OpenMpi.to_string(), "Open MPI");
/// ```
impl std::fmt::Display for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Implementation::OpenMpi => "Open MPI",
            Implementation::Mpich => "MPICH",
            Implementation::StandardAbi => "MPI-5 ABI",
            Implementation::Other => "MPI",
        })
    }
}

/// The MPI family this crate was built against (from `mpi.h`).
#[cfg(ferrompi_family = "openmpi")]
pub const IMPLEMENTATION: Implementation = Implementation::OpenMpi;
/// The MPI family this crate was built against (from `mpi.h`).
#[cfg(ferrompi_family = "mpich")]
pub const IMPLEMENTATION: Implementation = Implementation::Mpich;
/// The MPI family this crate was built against (from `mpi.h`).
#[cfg(ferrompi_family = "abi")]
pub const IMPLEMENTATION: Implementation = Implementation::StandardAbi;
/// The MPI family this crate was built against (from `mpi.h`).
#[cfg(ferrompi_family = "other")]
pub const IMPLEMENTATION: Implementation = Implementation::Other;

/// `MPI_VERSION.MPI_SUBVERSION` of the `mpi.h` this crate was built against, e.g. `"4.0"`.
pub const MPI_VERSION: &str = env!("FERROMPI_BUILD_MPI_VERSION");

/// Whether the installed MPI has MPI-4's large-count (`_c`) calls (MPI-4.0 §2.5.8). Almost
/// every operation takes more than `i32::MAX` elements either way (see
/// [`ErrorKind::CountOverflow`] for the few that need these calls); this says which path they take.
pub const LARGE_COUNT_CALLS: bool = cfg!(ferrompi_large_count);

/// How `build.rs` found MPI, e.g. `` `mpicc.mpich -show` ``, and where the bindings came from:
/// nothing more when bindgen read the installed `mpi.h`, `(bindings kept in
/// build/bindings/<set>.rs, checked against mpi.h)` when libclang was missing (see the
/// guide's [building chapter](crate::guide::building)).
pub const BUILD_PROBE: &str = env!("FERROMPI_BUILD_PROBE");

/// Compile-time assertion of the thread-safety traits of every public type, both what each is
/// and what it is not. A type holding a raw handle would otherwise follow the implementation's
/// handle representation (pointers in Open MPI, integers in MPICH): `Sync` on one MPI and not
/// on the other, so that code compiling against one fails against the other. The crate is
/// built against every MPI of the test matrix, so such a type fails the build on one of them.
#[allow(dead_code)]
mod thread_traits {
    use crate::request::{
        Active, ActiveAll, ActiveSet, Internal, NoBuffer, OwnedSet, Pair, Request, RequestSet,
        RequestStorage, Scope,
    };
    use crate::window::{
        Assert, EpochTarget, Exposure, LockType, SharedWindow, Window, WindowEpoch,
        shared::{AtomicEpoch, ReadEpoch, WriteEpoch},
    };
    use crate::*;

    type V = Vec<f64>;

    const fn send_sync<T: Send + Sync>() {}
    const fn send<T: Send>() {}
    const fn sync<T: Sync>() {}

    const _: () = {
        send_sync::<Communicator<'static>>();
        send_sync::<CartCommunicator<'static>>();
        send_sync::<Group<'static>>();
        send_sync::<Info<'static>>();
        send_sync::<Channel<'static>>();
        send_sync::<AttachedBuffer<'static>>();
        send_sync::<Message<'static>>();
        send_sync::<Datatype>();
        send_sync::<Status>();
        send_sync::<op::Operand>();
        send_sync::<op::UserOp<'static, f64>>();
        send_sync::<OwnedRequest<'static, V>>();
        send_sync::<PersistentRequest<'static, V>>();
        send_sync::<Active<'static, 'static, V>>();
        send_sync::<ActiveAll<'static, 'static, V>>();
        send_sync::<Pair<V, V>>();
        send_sync::<NoBuffer>();
        send_sync::<Internal>();
        send_sync::<RequestStorage>();
        send_sync::<Window<'static, f64>>();
        send_sync::<Exposure<'static, 'static, f64>>();
        send_sync::<SharedWindow<'static, f64>>();
        send_sync::<io::File<'static>>();
        send_sync::<io::SplitCollective<'static, 'static, V>>();
        send_sync::<(io::AccessMode, io::DataRep, io::FileView<'static>)>();
        send_sync::<ReadEpoch<'static, f64>>();
        send_sync::<AtomicEpoch<'static, u64>>();
        send_sync::<topology::Hierarchy<'static>>();
        send_sync::<Partition<f64>>();
        send_sync::<TypedPartition>();
        send_sync::<Error>();
        send_sync::<(
            InitOptions,
            ThreadLevel,
            Launcher,
            Pmi,
            Assert,
            LockType,
            SplitType,
        )>();
        send_sync::<ProcNull>();
        send_sync::<Destination>();
        send_sync::<Source>();
        send_sync::<TagMatch>();
        send_sync::<Comparison>();
        send_sync::<HwResource>();
        send_sync::<OpenMpiLocality>();
        send_sync::<PersistentCollectives>();
        send_sync::<ErrorClass>();
        send_sync::<ParseError>();
        send_sync::<TypedBlock>();
        send_sync::<Bytes<f64>>();
        send_sync::<slurm::SlurmJob>();
        send_sync::<topology::NumaNode>();
        send_sync::<topology::Placement>();
        send_sync::<topology::RankPlace>();
        send_sync::<topology::NumaSource>();
        send_sync::<op::Sum>();
        send_sync::<op::Prod>();
        send_sync::<op::Max>();
        send_sync::<op::Min>();
        send_sync::<op::MaxLoc>();
        send_sync::<op::MinLoc>();
        send_sync::<op::Loc<f64>>();
        send_sync::<op::BitAnd>();
        send_sync::<op::BitOr>();
        send_sync::<op::BitXor>();
        send_sync::<op::LogicalAnd>();
        send_sync::<op::LogicalOr>();
        send_sync::<op::LogicalXor>();
        send_sync::<op::Replace>();
        send_sync::<op::NoOp>();
        #[cfg(feature = "serde")]
        send_sync::<RecvValue<'static, 'static, f64>>();
        send::<OwnedSet<'static, V>>();
        sync::<Mpi>();
    };

    /// Implemented twice for a type with the marker trait `M` (`Send` or `Sync`), so naming
    /// `check` is ambiguous, and the build fails, exactly when the type has it.
    trait AmbiguousIf<M: ?Sized, A> {
        fn check() {}
    }
    struct IsSend;
    struct IsSync;
    impl<T: ?Sized, M: ?Sized> AmbiguousIf<M, ()> for T {}
    impl<T: ?Sized + Send> AmbiguousIf<IsSend, u8> for T {}
    impl<T: ?Sized + Sync> AmbiguousIf<IsSync, u8> for T {}

    macro_rules! neither_send_nor_sync {
        ($($t:ty),* $(,)?) => {$(
            let _ = <$t as AmbiguousIf<IsSend, _>>::check;
            let _ = <$t as AmbiguousIf<IsSync, _>>::check;
        )*};
    }

    /// Tied to one thread: a scope and what borrows it, and the views of an open epoch. The
    /// thread gate's pass (`gate::Pass`), which a scope, its requests and sets and an epoch
    /// use instead of the per-call test, rests on this.
    fn thread_bound() {
        neither_send_nor_sync!(
            Scope<'static, 'static>,
            Request<'static>,
            RequestSet<'static>,
            ActiveSet<'static, 'static>,
            WindowEpoch<'static, 'static, f64>,
            EpochTarget<'static, 'static, f64>,
            WriteEpoch<'static, f64>,
        );
        let _ = <Mpi as AmbiguousIf<IsSend, _>>::check;
        let _ = <OwnedSet<'static, V> as AmbiguousIf<IsSync, _>>::check;
    }
}

#[cfg(test)]
mod tests {
    /// `tools/test.sh` builds Debian's MPIs with libclang hidden and says so here: the suite
    /// that follows must then run on the kept bindings, not on a stale bindgen build.
    #[test]
    fn bindings_come_from_where_the_suite_expects() {
        match std::env::var("FERROMPI_EXPECT_BINDINGS").as_deref() {
            Ok("kept") => assert!(
                super::BUILD_PROBE.contains("bindings kept in build/bindings/"),
                "expected a build on the kept bindings, got {:?}; `cargo clean -p ferrompi` \
                 and build again with libclang hidden",
                super::BUILD_PROBE
            ),
            Ok("bindgen") => assert!(!super::BUILD_PROBE.contains("bindings kept")),
            _ => {}
        }
    }
}

/// The README's examples, compiled as doctests so they stay correct.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
