//! Communicators (MPI-4.0 chapter 7): the predefined world and self, and the ones created from
//! them, with point-to-point ([`p2p`]) and collective ([`collective`]) operations.
//!
//! A [`Communicator`] borrows the [`Mpi`] environment, so it cannot outlive `MPI_Finalize`. One it
//! created (by `dup`, `split`, …) is freed when dropped; the predefined ones never are.
//! Every created communicator gets `MPI_ERRORS_RETURN`.

pub mod agreement;
pub mod bsend;
pub(crate) mod call;
pub mod cart;
pub mod collective;
pub mod graph;
pub mod group;
pub(crate) mod large;
pub mod neighbor;
pub mod nonblocking;
pub mod p2p;
pub mod partition;
pub mod persistent;
pub mod persistent_collective;
pub mod probe;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod typed;
mod view;
mod view_v;

use crate::env::{self, Mpi, enter};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::gate::ThreadGate;
use crate::info::Info;
use std::ffi::{CString, c_int};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

/// An MPI communicator.
///
/// `Send + Sync` at every thread level: each call passes the thread gate described in
/// [`env`](mod@crate::env), and the raw handle is only an identifier (a pointer in Open MPI, an
/// integer in MPICH) that MPI itself synchronises.
///
/// # Methods by family
///
/// Each family is an `impl` block of its own below, documented and with a runnable example on
/// every method (rustdoc lists the blocks by module, so here they are in reading order):
///
/// | family | methods | MPI-4.0 |
/// |---|---|---|
/// | the communicator | [`rank`](Self::rank), [`size`](Self::size), [`dup`](Self::dup), [`split`](Self::split), [`split_shared`](Self::split_shared), [`split_type`](Self::split_type), [`compare`](Self::compare), [`set_name`](Self::set_name), [`free`](Self::free) | ch. 7 |
/// | point-to-point | [`send`](Self::send), [`ssend`](Self::ssend), [`bsend`](Self::bsend), [`rsend`](Self::rsend), [`recv`](Self::recv), [`sendrecv`](Self::sendrecv), [`sendrecv_replace`](Self::sendrecv_replace) | §3.2–§3.4, §3.10 |
/// | probes | [`probe`](Self::probe), [`iprobe`](Self::iprobe), [`mprobe`](Self::mprobe), [`improbe`](Self::improbe), [`recv_vec`](Self::recv_vec), [`recv_uninit`](Self::recv_uninit) | §3.8 |
/// | nonblocking point-to-point | [`isend`](Self::isend), [`irecv`](Self::irecv), [`isend_owned`](Self::isend_owned), [`irecv_owned`](Self::irecv_owned), [`isendrecv`](Self::isendrecv), … | §3.7 |
/// | persistent point-to-point | [`send_init`](Self::send_init), [`recv_init`](Self::recv_init), … | §3.9 |
/// | collectives | [`barrier`](Self::barrier), [`bcast`](Self::bcast), [`reduce`](Self::reduce), [`allreduce`](Self::allreduce), [`scan`](Self::scan), [`gather`](Self::gather), [`scatter`](Self::scatter), [`allgather`](Self::allgather), [`alltoall`](Self::alltoall), their `_in_place` and `i` forms | §6.3–§6.12 |
/// | collectives with per-rank blocks | [`gatherv`](Self::gatherv), [`scatterv`](Self::scatterv), [`allgatherv`](Self::allgatherv), [`alltoallv`](Self::alltoallv), [`alltoallw`](Self::alltoallw), [`reduce_scatter`](Self::reduce_scatter), … | §6.5–§6.10 |
/// | persistent collectives | [`barrier_init`](Self::barrier_init), [`allreduce_init`](Self::allreduce_init), [`gatherv_init`](Self::gatherv_init), … | §6.13 |
/// | groups | [`group`](Self::group), [`create`](Self::create), [`create_from_group`](Self::create_from_group) | §7.3, §7.4.2 |
/// | channels, typed messages | [`channel`](Self::channel), `send_value`, `recv_value` (feature `serde`) | ch. 3 |
/// | the node and NUMA hierarchy | [`hierarchy`](Self::hierarchy), [`split_numa`](Self::split_numa) | §7.4.2 |
/// | virtual topologies | [`cart_create`](Self::cart_create) (a [`CartCommunicator`](cart::CartCommunicator)), [`cart_map`](Self::cart_map), [`graph_create`](Self::graph_create), [`dist_graph_create_adjacent`](Self::dist_graph_create_adjacent), [`dist_graph_create`](Self::dist_graph_create), [`topo_test`](Self::topo_test); the neighbourhood collectives on a [`TopologyCommunicator`](neighbor::TopologyCommunicator) | §8.5–§8.8 |
#[derive(Debug)]
pub struct Communicator<'env> {
    raw: ffi::MPI_Comm,
    rank: c_int,
    size: c_int,
    owned: bool,
    /// Made by `split_type(Shared)` (or a `dup` of one), or `MPI_COMM_SELF`: its processes
    /// are known to share memory, so shared windows skip checking.
    node_local: bool,
    _env: PhantomData<&'env Mpi>,
}

// SAFETY: the handle is an identifier MPI resolves internally; sharing or moving it between
// threads is safe as long as calls respect the provided thread level, which every method
// enforces through `env::enter` (an error, or the serializing lock). The cached rank and size
// are immutable. `Drop` passes the gate too and leaks the handle when the gate refuses.
unsafe impl Send for Communicator<'_> {}
// SAFETY: as for `Send`; `&Communicator` gives access only to gated MPI calls and plain reads.
unsafe impl Sync for Communicator<'_> {}

/// How two communicators or groups relate (`MPI_Comm_compare`, `MPI_Group_compare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `MPI_IDENT`: the same object.
    Identical,
    /// `MPI_CONGRUENT`: same members in the same order, different contexts (communicators only).
    Congruent,
    /// `MPI_SIMILAR`: same members, different order.
    Similar,
    /// `MPI_UNEQUAL`: otherwise.
    Unequal,
}

impl Comparison {
    fn from_raw(raw: c_int, operation: &'static str) -> Result<Comparison> {
        Ok(match raw {
            r if r == crate::c_int_const!(ffi::MPI_IDENT) => Comparison::Identical,
            r if r == crate::c_int_const!(ffi::MPI_CONGRUENT) => Comparison::Congruent,
            r if r == crate::c_int_const!(ffi::MPI_SIMILAR) => Comparison::Similar,
            r if r == crate::c_int_const!(ffi::MPI_UNEQUAL) => Comparison::Unequal,
            other => {
                return Err(ErrorKind::InvalidArgument {
                    operation,
                    reason: format!("MPI returned an unknown comparison result {other}"),
                }
                .into());
            }
        })
    }
}

/// The kinds of [`Communicator::split_type`] (MPI-4.0 §7.4.2).
///
/// Every kind exists in every build; one the installed MPI lacks is [`ErrorKind::Unsupported`]
/// (on every rank alike, since it is decided when the crate is built):
///
/// | kind | Open MPI 4.1 | Open MPI 5 | MPICH 4, 5 |
/// |---|---|---|---|
/// | [`Shared`](SplitType::Shared) | yes | yes | yes |
/// | [`HwGuided`](SplitType::HwGuided) | no | yes | yes |
/// | [`OpenMpi`](SplitType::OpenMpi) | yes | yes | no |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SplitType {
    /// `MPI_COMM_TYPE_SHARED`: processes that can create shared memory windows together
    /// (in practice, the ranks of one node).
    Shared,
    /// `MPI_COMM_TYPE_HW_GUIDED` (MPI-4.0) with the info key `mpi_hw_resource_type`: the
    /// processes bound within the same instance of a hardware resource. A process not bound
    /// within one instance gets `None`, and so may every process when one instance would hold
    /// the whole communicator (MPICH returns `MPI_COMM_NULL` then).
    HwGuided(HwResource),
    /// Open MPI's `OMPI_COMM_TYPE_*`: processes sharing a locality, as Open MPI's runtime sees
    /// their binding. Unbound processes each get a communicator of their own (measured on
    /// Open MPI 4.1.4): see [`Communicator::split_numa`] for an answer that does not depend on
    /// that.
    OpenMpi(OpenMpiLocality),
}

/// A hardware resource for [`SplitType::HwGuided`]: the hwloc object type names MPICH and
/// Open MPI accept as `mpi_hw_resource_type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HwResource {
    /// `"mpi_shared_memory"`: the value every MPI-4 implementation must accept, the same
    /// grouping as [`SplitType::Shared`].
    SharedMemory,
    /// `"Package"`: a processor socket.
    Package,
    /// `"NUMANode"`: a NUMA domain.
    NumaNode,
    /// `"L3Cache"`.
    L3Cache,
    /// `"L2Cache"`.
    L2Cache,
    /// `"Core"`.
    Core,
}

impl HwResource {
    /// The value of the `mpi_hw_resource_type` info key.
    ///
    /// ```
    /// use ferrompi::HwResource;
    /// assert_eq!(HwResource::NumaNode.name(), "NUMANode");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            HwResource::SharedMemory => "mpi_shared_memory",
            HwResource::Package => "Package",
            HwResource::NumaNode => "NUMANode",
            HwResource::L3Cache => "L3Cache",
            HwResource::L2Cache => "L2Cache",
            HwResource::Core => "Core",
        }
    }
}

/// Open MPI's split types (`OMPI_COMM_TYPE_*`, Open MPI's `MPI_Comm_split_type(3)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpenMpiLocality {
    /// `OMPI_COMM_TYPE_HWTHREAD`.
    HwThread,
    /// `OMPI_COMM_TYPE_CORE`.
    Core,
    /// `OMPI_COMM_TYPE_L1CACHE`.
    L1Cache,
    /// `OMPI_COMM_TYPE_L2CACHE`.
    L2Cache,
    /// `OMPI_COMM_TYPE_L3CACHE`.
    L3Cache,
    /// `OMPI_COMM_TYPE_SOCKET`.
    Socket,
    /// `OMPI_COMM_TYPE_NUMA`.
    Numa,
    /// `OMPI_COMM_TYPE_BOARD`.
    Board,
    /// `OMPI_COMM_TYPE_HOST`: the node.
    Host,
}

/// The error for a split type the installed MPI lacks.
#[cfg(not(all(ferrompi_hw_guided, ferrompi_ompi_comm_types)))]
fn unsupported(what: &str) -> Error {
    ErrorKind::Unsupported {
        operation: "split_type",
        reason: format!(
            "{what} is not offered by the MPI this crate was built against ({}); \
             Communicator::split_numa works everywhere",
            crate::BUILD_PROBE
        ),
    }
    .into()
}

impl SplitType {
    /// The split type constant and the `mpi_hw_resource_type` value, or why this MPI has none.
    fn raw(self) -> Result<(c_int, Option<&'static str>)> {
        match self {
            SplitType::Shared => Ok((crate::c_int_const!(ffi::MPI_COMM_TYPE_SHARED), None)),
            #[cfg(ferrompi_hw_guided)]
            SplitType::HwGuided(resource) => Ok((
                crate::c_int_const!(ffi::MPI_COMM_TYPE_HW_GUIDED),
                Some(resource.name()),
            )),
            #[cfg(not(ferrompi_hw_guided))]
            SplitType::HwGuided(_) => Err(unsupported("MPI_COMM_TYPE_HW_GUIDED (MPI-4.0)")),
            #[cfg(ferrompi_ompi_comm_types)]
            SplitType::OpenMpi(locality) => Ok((
                match locality {
                    OpenMpiLocality::HwThread => crate::c_int_const!(ffi::OMPI_COMM_TYPE_HWTHREAD),
                    OpenMpiLocality::Core => crate::c_int_const!(ffi::OMPI_COMM_TYPE_CORE),
                    OpenMpiLocality::L1Cache => crate::c_int_const!(ffi::OMPI_COMM_TYPE_L1CACHE),
                    OpenMpiLocality::L2Cache => crate::c_int_const!(ffi::OMPI_COMM_TYPE_L2CACHE),
                    OpenMpiLocality::L3Cache => crate::c_int_const!(ffi::OMPI_COMM_TYPE_L3CACHE),
                    OpenMpiLocality::Socket => crate::c_int_const!(ffi::OMPI_COMM_TYPE_SOCKET),
                    OpenMpiLocality::Numa => crate::c_int_const!(ffi::OMPI_COMM_TYPE_NUMA),
                    OpenMpiLocality::Board => crate::c_int_const!(ffi::OMPI_COMM_TYPE_BOARD),
                    OpenMpiLocality::Host => crate::c_int_const!(ffi::OMPI_COMM_TYPE_HOST),
                },
                None,
            )),
            #[cfg(not(ferrompi_ompi_comm_types))]
            SplitType::OpenMpi(_) => Err(unsupported("Open MPI's OMPI_COMM_TYPE_*")),
        }
    }
}

/// The communicator itself: rank and size, names, duplicating and splitting (MPI-4.0 §7.4),
/// comparing (§7.4.1). The other families follow: point-to-point, probes, nonblocking and
/// persistent point-to-point, the collectives (blocking, in place, nonblocking, persistent),
/// communicators from groups, channels, checked agreement, the node and NUMA hierarchy.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// assert!(world.rank() < world.size());
/// let copy = world.dup()?; // same processes, separate messages
/// copy.set_name("solver")?;
/// assert_eq!(copy.name()?, "solver");
/// // Even and odd ranks in two communicators, ordered by rank.
/// let half = world.split(Some(world.rank() % 2), world.rank())?.expect("every rank has a colour");
/// assert_eq!(half.rank(), world.rank() / 2);
/// let node = world.split_shared(0)?; // the processes sharing this one's memory
/// assert!(node.size() >= 1);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Takes ownership of a communicator MPI just created: installs `MPI_ERRORS_RETURN` and
    /// caches rank and size. `MPI_COMM_NULL` (the process is not in the new communicator) is `None`.
    ///
    /// Called with the thread gate held, right after the creating call, so on error it frees the
    /// handle itself: dropping it would take the gate again (a deadlock at `SERIALIZED`).
    ///
    /// # Safety
    /// `raw` is `MPI_COMM_NULL` or a communicator MPI just created that nothing else owns or
    /// frees, and the calling thread holds the thread gate.
    unsafe fn adopt(raw: ffi::MPI_Comm, operation: &'static str) -> Result<Option<Self>> {
        if raw == ffi::MPI_COMM_NULL {
            return Ok(None);
        }
        let mut comm = Communicator {
            raw,
            rank: 0,
            size: 0,
            owned: false,
            node_local: false,
            _env: PhantomData,
        };
        let set_up = |comm: &mut Communicator<'_>| -> Result<()> {
            // SAFETY: a valid communicator MPI just created, and a predefined error handler.
            let rc = unsafe { ffi::MPI_Comm_set_errhandler(raw, ffi::MPI_ERRORS_RETURN) };
            check(rc, operation)?;
            // SAFETY: a valid communicator; writes one int.
            let rc = unsafe { ffi::MPI_Comm_rank(raw, &mut comm.rank) };
            check(rc, operation)?;
            // SAFETY: as above.
            let rc = unsafe { ffi::MPI_Comm_size(raw, &mut comm.size) };
            check(rc, operation)
        };
        match set_up(&mut comm) {
            Ok(()) => {
                comm.owned = true;
                crate::live::made(crate::live::Kind::Communicator);
                crate::fault::comm_made(raw, comm.size);
                Ok(Some(comm))
            }
            Err(e) => {
                // SAFETY: the handle is ours and not yet owned by `comm` (whose drop is a no-op);
                // the caller holds the thread gate. Best effort: the first error is the one reported.
                let _ = unsafe { ffi::MPI_Comm_free(&mut comm.raw) };
                Err(e)
            }
        }
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let raw: ferrompi::ffi::MPI_Comm = world.as_raw(); // still owned by `world`
    /// let _ = raw;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn as_raw(&self) -> ffi::MPI_Comm {
        self.raw
    }

    /// Passes the thread gate for `operation` on this communicator ([`env::enter_on`]: the
    /// watchdog names the communicator should the call not return).
    #[inline(always)]
    pub(crate) fn enter(&self, operation: &'static str) -> Result<ThreadGate> {
        env::enter_on(operation, self.raw)
    }

    /// Makes `call` behind the thread gate for `operation` on this communicator
    /// ([`env::gated_on`]).
    #[inline(always)]
    pub(crate) fn gated<R>(&self, operation: &'static str, call: impl FnOnce() -> R) -> Result<R> {
        env::gated_on(operation, self.raw, call)
    }

    /// Whether this communicator's processes share memory, known without asking MPI: it was
    /// made by [`split_shared`](Communicator::split_shared) (or is a dup of one), or is
    /// `MPI_COMM_SELF`. `false` means "not known", not "not shared".
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let node = world.split_shared(0)?;
    /// assert!(node.is_known_node_local()); // made by a shared-memory split
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_known_node_local(&self) -> bool {
        self.node_local
    }

    /// Whether this communicator's processes share memory: known ones at once, otherwise by
    /// splitting by node (collective) and comparing sizes. Returns the node's process count.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let on_this_node = world.node_process_count()?;
    /// assert!(on_this_node >= 1 && on_this_node <= world.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::split_type`].
    pub fn node_process_count(&self) -> Result<i32> {
        if self.node_local {
            return Ok(self.size);
        }
        Ok(self.split_shared(0)?.size())
    }

    /// This process's rank in the communicator (`MPI_Comm_rank`, MPI-4.0 §7.4.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let rank = world.rank();
    /// assert!((0..world.size()).contains(&rank));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The number of processes in the communicator (`MPI_Comm_size`, MPI-4.0 §7.4.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert!(world.size() >= 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn size(&self) -> i32 {
        self.size
    }

    /// Checks that `rank` is a rank of this communicator, for use as `role`.
    #[inline]
    pub(crate) fn check_rank(
        &self,
        rank: i32,
        role: &'static str,
        operation: &'static str,
    ) -> Result<()> {
        // One unsigned comparison: a negative rank becomes a `u32` above any size.
        if (rank as u32) < (self.size as u32) {
            Ok(())
        } else {
            Err(invalid_rank(rank, self.size, role, operation))
        }
    }

    /// `MPI_Comm_dup` (MPI-4.0 §7.4.2): a new communicator with the same group and a new context,
    /// so its messages never match the original's. Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let library = world.dup()?; // a library's own messages never match the program's
    /// assert_eq!((library.rank(), library.size()), (world.rank(), world.size()));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] from a thread the thread level does not allow;
    /// [`ErrorKind::Mpi`].
    pub fn dup(&self) -> Result<Communicator<'env>> {
        const OP: &str = "dup";
        let _gate = self.enter(OP)?;
        let mut raw = ffi::MPI_COMM_NULL;
        // SAFETY: valid communicator; MPI writes the new handle.
        check(unsafe { ffi::MPI_Comm_dup(self.raw, &mut raw) }, OP)?;
        // SAFETY: MPI just made `raw` for us, under the gate we hold.
        let mut dup =
            unsafe { Communicator::adopt(raw, OP) }?.ok_or_else(|| unexpected_null(OP))?;
        dup.node_local = self.node_local;
        Ok(dup)
    }

    /// `MPI_Comm_split` (MPI-4.0 §7.4.2): partitions the processes by `color`, ordering each part
    /// by `key` (ties by rank). Collective. `None` as color leaves this process out and it gets
    /// `None` back.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // Rows of a grid of 2 columns: ranks 0-1, 2-3, …; `None` would leave the split.
    /// let row = world.split(Some(world.rank() / 2), world.rank())?.expect("every rank has a row");
    /// assert_eq!(row.rank(), world.rank() % 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a negative color (this process still takes part in the
    /// split, left out of every part, so that the others are not left waiting in it);
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<Communicator<'env>>> {
        const OP: &str = "split";
        let bad_color = color.filter(|&c| c < 0);
        let color = match color {
            Some(c) if c >= 0 => c,
            _ => ffi::MPI_UNDEFINED,
        };
        let _gate = self.enter(OP)?;
        let mut raw = ffi::MPI_COMM_NULL;
        // SAFETY: valid communicator; MPI writes the new handle.
        let rc = unsafe { ffi::MPI_Comm_split(self.raw, color, key, &mut raw) };
        check(rc, OP)?;
        if let Some(c) = bad_color {
            // MPI_UNDEFINED gave no communicator: nothing to free.
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!("color {c} is negative; use None to leave this process out"),
            }
            .into());
        }
        // SAFETY: MPI just made `raw` (or `MPI_COMM_NULL`) for us, under the gate we hold.
        unsafe { Communicator::adopt(raw, OP) }
    }

    /// `MPI_Comm_split_type` (MPI-4.0 §7.4.2): splits by a hardware property, e.g. one
    /// communicator per shared-memory node. Collective. `None` as kind (`MPI_UNDEFINED`) leaves
    /// this process out and it gets `None` back, as with [`split`](Communicator::split); MPI
    /// may also answer `None` for a hardware kind (see [`SplitType::HwGuided`]).
    ///
    /// ```no_run
    /// # use ferrompi::{Mpi, SplitType, comm::HwResource};
    /// let mpi = Mpi::init()?;
    /// let node = mpi.world().split_type(Some(SplitType::Shared), 0)?.expect("every rank has a node");
    /// match node.split_type(Some(SplitType::HwGuided(HwResource::Package)), 0) {
    ///     Ok(Some(socket)) => println!("{} ranks on my socket", socket.size()),
    ///     Ok(None) => println!("not bound within one socket"),
    ///     Err(e) => println!("{e}"), // ErrorKind::Unsupported on Open MPI 4
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Unsupported`] for a kind the installed MPI lacks; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn split_type(
        &self,
        kind: Option<SplitType>,
        key: i32,
    ) -> Result<Option<Communicator<'env>>> {
        const OP: &str = "split_type";
        let (raw_kind, resource) = match kind {
            Some(kind) => kind.raw()?,
            None => (ffi::MPI_UNDEFINED, None),
        };
        let info = match resource {
            Some(value) => {
                let mut info = Info::create()?;
                info.set("mpi_hw_resource_type", value)?;
                Some(info)
            }
            None => None,
        };
        let _gate = self.enter(OP)?;
        let mut raw = ffi::MPI_COMM_NULL;
        // SAFETY: valid communicator and info (or MPI_INFO_NULL); MPI writes the new handle.
        let rc = unsafe {
            ffi::MPI_Comm_split_type(
                self.raw,
                raw_kind,
                key,
                crate::info::raw_or_null(info.as_ref()),
                &mut raw,
            )
        };
        check(rc, OP)?;
        // SAFETY: MPI just made `raw` (or `MPI_COMM_NULL`) for us, under the gate we hold.
        let mut comm = unsafe { Communicator::adopt(raw, OP) }?;
        if let Some(comm) = &mut comm {
            // Every kind groups processes within one machine: a node, or a hardware resource
            // (hwloc object, Open MPI locality up to the host) inside one.
            comm.node_local = kind.is_some();
        }
        Ok(comm)
    }

    /// The ranks of this node: `split_type(Some(SplitType::Shared), key)`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let node = world.split_shared(world.rank())?; // MPI_COMM_TYPE_SHARED
    /// assert!(node.size() <= world.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::split_type`].
    pub fn split_shared(&self, key: i32) -> Result<Communicator<'env>> {
        const OP: &str = "split_shared";
        self.split_type(Some(SplitType::Shared), key)?
            .ok_or_else(|| unexpected_null(OP))
    }

    /// `MPI_Comm_compare` (MPI-4.0 §7.4.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Comparison;
    /// let copy = world.dup()?;
    /// assert_eq!(world.compare(&copy)?, Comparison::Congruent); // same group, another context
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn compare(&self, other: &Communicator<'_>) -> Result<Comparison> {
        const OP: &str = "compare";
        let _gate = self.enter(OP)?;
        let mut result = 0;
        // SAFETY: two valid communicators; writes one int.
        let rc = unsafe { ffi::MPI_Comm_compare(self.raw, other.raw, &mut result) };
        check(rc, OP)?;
        Comparison::from_raw(result, OP)
    }

    /// The communicator's name (`MPI_Comm_get_name`, MPI-4.0 §7.8).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert_eq!(world.name()?, "MPI_COMM_WORLD");
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn name(&self) -> Result<String> {
        const OP: &str = "name";
        let _gate = enter(OP)?;
        env::mpi_string(ffi::MPI_MAX_OBJECT_NAME, OP, |buf, len| {
            // SAFETY: `buf` has MPI_MAX_OBJECT_NAME bytes, as the call requires.
            unsafe { ffi::MPI_Comm_get_name(self.raw, buf, len) }
        })
    }

    /// Names the communicator (`MPI_Comm_set_name`, MPI-4.0 §7.8); local to this process. The
    /// watchdog's line names a call that has not returned by its communicator's name
    /// ([`InitOptions::watchdog`](crate::InitOptions::watchdog)).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let solver = world.dup()?;
    /// solver.set_name("solver")?; // shown by MPI's error messages and tools
    /// assert_eq!(solver.name()?, "solver");
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `name` has a NUL byte or is longer than
    /// `MPI_MAX_OBJECT_NAME - 1` bytes; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn set_name(&self, name: &str) -> Result<()> {
        const OP: &str = "set_name";
        let max = usize::try_from(ffi::MPI_MAX_OBJECT_NAME - 1).unwrap_or(0);
        if name.len() > max {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!("name is {} bytes, at most {max} allowed", name.len()),
            }
            .into());
        }
        let c_name = CString::new(name).map_err(|_| ErrorKind::InvalidArgument {
            operation: OP,
            reason: "name contains a NUL byte".into(),
        })?;
        let _gate = enter(OP)?;
        // SAFETY: valid communicator and NUL-terminated string that MPI copies.
        let rc = unsafe { ffi::MPI_Comm_set_name(self.raw, c_name.as_ptr()) };
        check(rc, OP)?;
        crate::fault::comm_named(self.raw, self.size, name);
        Ok(())
    }

    /// Frees the communicator now (`MPI_Comm_free`, MPI-4.0 §7.4.3), reporting errors; dropping
    /// it does the same silently. Predefined communicators are not freed.
    ///
    /// Using a communicator after freeing it does not compile:
    /// ```compile_fail
    /// # use ferrompi::Mpi;
    /// let mpi = Mpi::init().unwrap();
    /// let comm = mpi.world().dup().unwrap();
    /// comm.free().unwrap();
    /// comm.barrier().unwrap(); // error[E0382]: borrow of moved value: `comm`
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (the handle is then leaked, not freed); [`ErrorKind::Mpi`].
    pub fn free(self) -> Result<()> {
        let mut this = ManuallyDrop::new(self);
        this.free_raw()
    }

    fn free_raw(&mut self) -> Result<()> {
        if !self.owned {
            return Ok(());
        }
        self.owned = false;
        let _gate = enter("free")?;
        crate::fault::comm_freed(self.raw);
        // SAFETY: we own the handle and this is its only free; MPI sets it to MPI_COMM_NULL.
        check(unsafe { ffi::MPI_Comm_free(&mut self.raw) }, "free")?;
        crate::live::freed(crate::live::Kind::Communicator);
        Ok(())
    }
}

impl Drop for Communicator<'_> {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `free` reports them.
        let _ = self.free_raw();
    }
}

impl Mpi {
    /// `MPI_COMM_WORLD`: all processes of the job. Makes no MPI call.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let world = mpi.world(); // MPI_COMM_WORLD, borrowed from `mpi`
    /// assert!(world.size() >= 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn world(&self) -> Communicator<'_> {
        let (rank, size) = self.world_rank_size();
        Communicator {
            raw: ffi::MPI_COMM_WORLD,
            rank,
            size,
            owned: false,
            node_local: false,
            _env: PhantomData,
        }
    }

    /// `MPI_COMM_SELF`: this process alone. Makes no MPI call.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let alone = mpi.self_comm(); // MPI_COMM_SELF
    /// assert_eq!(alone.size(), 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn self_comm(&self) -> Communicator<'_> {
        Communicator {
            raw: ffi::MPI_COMM_SELF,
            rank: 0,
            size: 1,
            owned: false,
            node_local: true,
            _env: PhantomData,
        }
    }
}

/// An [`ErrorKind::InvalidArgument`], built out of line.
#[cold]
pub(crate) fn invalid_argument(operation: &'static str, reason: String) -> Error {
    ErrorKind::InvalidArgument { operation, reason }.into()
}

#[cold]
pub(crate) fn unexpected_null(operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: "MPI returned MPI_COMM_NULL unexpectedly".into(),
    }
    .into()
}

/// The error of a rank outside `0..size`, built out of line so that the checks that return it
/// stay a compare and a branch on the hot path.
#[cold]
fn invalid_rank(rank: i32, size: i32, role: &'static str, operation: &'static str) -> Error {
    ErrorKind::InvalidRank {
        operation,
        role,
        rank,
        size,
    }
    .into()
}
