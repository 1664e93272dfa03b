//! Where the processes run: nodes, NUMA domains and their leaders in one collective call
//! ([`Communicator::hierarchy`]), NUMA detection from Linux that does not depend on the MPI
//! ([`Placement`]), a NUMA split that works on every MPI ([`Communicator::split_numa`]), and a
//! Cartesian grid laid out over the nodes ([`Hierarchy::cart_create`], in [`grid`]).
//! MPI-4.0 §7.4.2 (`MPI_Comm_split_type`); the rest is the operating system's view.
//!
//! ```no_run
//! use ferrompi::Mpi;
//!
//! let mpi = Mpi::init()?;
//! let h = mpi.world().hierarchy()?;
//! if mpi.world().rank() == 0 {
//!     println!("{h}"); // nodes, hosts, NUMA groups, binding, Slurm
//! }
//! // One copy of read-mostly data per node, shared by `h.node`; leaders talk across nodes.
//! if let Some(leaders) = &h.node_leaders {
//!     leaders.barrier()?;
//! }
//! let threads = h.threads_per_rank();
//! # let _ = threads;
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! # NUMA: bound and unbound processes
//! A process is *bound within a NUMA domain* when every CPU it may run on
//! (`sched_getaffinity`) lies in one NUMA node of `/sys/devices/system/node` (on a machine with
//! one NUMA node, every process is). Only such processes belong to a NUMA group:
//! [`Communicator::split_numa`] returns `None` for the others, and the report says "unbound".
//! The MPIs answer differently for unbound processes (Open MPI 4.1 puts each in a group of its
//! own, MPICH gives `MPI_COMM_NULL`), so ferrompi decides boundness itself and never asks the MPI
//! for a process it considers unbound.
//!
//! Processes that were bound (allowed on fewer CPUs than the machine has) are grouped by the
//! MPI's own split type when it has one (Open MPI's `OMPI_COMM_TYPE_NUMA`, else MPI-4's
//! `MPI_COMM_TYPE_HW_GUIDED` with `NUMANode`), which follows the MPI's hwloc view of the
//! machine. If some process of the node was not bound, or the MPI leaves a bound process out
//! (MPICH does when one NUMA domain would hold the whole node), every process of the node uses
//! the operating system's NUMA node numbers instead. [`Hierarchy::numa_source`] says which.
//!
//! `FERROMPI_NUMA_SYSFS` replaces the directory `/sys/devices/system/node` (for tests, and
//! for containers that hide it), as `HWLOC_FSROOT` does for hwloc.

pub mod grid;

use crate::comm::{Communicator, OpenMpiLocality, SplitType};
use crate::env::{Launcher, processor_name};
use crate::error::{Error, ErrorKind, ParseError, Result};
use crate::op::Min;
use crate::slurm::SlurmJob;
use std::fmt;
use std::path::{Path, PathBuf};

/// The largest CPU number a CPU list may name.
const MAX_CPU: usize = 1 << 16;

/// Parses a Linux CPU list (`/sys/devices/system/node/node0/cpulist`, `taskset -c`):
/// `0-3,8,10-11` is `[0, 1, 2, 3, 8, 10, 11]`, sorted and without duplicates; empty is empty.
///
/// ```
/// use ferrompi::topology::parse_cpulist;
/// assert_eq!(parse_cpulist("0-3,8,10-11\n")?, [0, 1, 2, 3, 8, 10, 11]);
/// # Ok::<(), ferrompi::ParseError>(())
/// ```
///
/// The CPUs are collected in a set of 65536 bits, so that the time and memory a list takes are
/// bounded whatever it holds (`0-65535` repeated is 8 KiB of set, not gigabytes of numbers).
///
/// # Errors
/// [`ParseError`] for anything else, or a CPU above 65536.
pub fn parse_cpulist(list: &str) -> std::result::Result<Vec<usize>, ParseError> {
    const BITS: usize = u64::BITS as usize;
    let list = list.trim();
    if list.is_empty() {
        return Ok(Vec::new());
    }
    let mut set = vec![0u64; (MAX_CPU + 1).div_ceil(BITS)];
    for part in list.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let number = |s: &str| match s.parse::<usize>() {
            Ok(n) if n <= MAX_CPU && s.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(ParseError::new(format!(
                "'{part}' is not a CPU or a range a-b"
            ))),
        };
        let (lo, hi) = (number(lo)?, number(hi)?);
        if hi < lo {
            return Err(ParseError::new(format!(
                "range '{part}' ends before it starts"
            )));
        }
        // Whole words where the range covers them, bit by bit at its ends.
        let mut cpu = lo;
        while cpu <= hi {
            if cpu % BITS == 0 && hi - cpu + 1 >= BITS {
                set[cpu / BITS] = u64::MAX;
                cpu += BITS;
            } else {
                set[cpu / BITS] |= 1 << (cpu % BITS);
                cpu += 1;
            }
        }
    }
    // The set bits in order, word by word: a short list costs a scan of the words, not of
    // every possible CPU.
    let mut cpus = Vec::new();
    for (w, &word) in set.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            cpus.push(w * BITS + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
    Ok(cpus)
}

/// Writes CPUs as a compact list, the inverse of [`parse_cpulist`].
///
/// ```
/// use ferrompi::topology::format_cpulist;
/// assert_eq!(format_cpulist(&[0, 1, 2, 3, 8]), "0-3,8");
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub fn format_cpulist(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out += &if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        };
        i = j + 1;
    }
    out
}

/// One NUMA node as Linux reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    /// Its number (`nodeN`).
    pub id: u32,
    /// Its CPUs (`nodeN/cpulist`).
    pub cpus: Vec<usize>,
    /// Its memory in bytes (`MemTotal` of `nodeN/meminfo`), where readable.
    pub memory_bytes: Option<u64>,
}

/// This process's place on its machine: the CPUs it may run on and the machine's NUMA nodes.
/// Read from Linux, independently of the MPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The CPUs this process may run on (`sched_getaffinity`).
    pub allowed_cpus: Vec<usize>,
    /// The machine's NUMA nodes. A kernel without NUMA support reports one node holding every
    /// online CPU.
    pub numa_nodes: Vec<NumaNode>,
}

impl Placement {
    /// Reads the affinity of this process and the NUMA nodes of `/sys/devices/system/node`
    /// (or of `FERROMPI_NUMA_SYSFS`).
    ///
    /// ```
    /// let placement = ferrompi::topology::Placement::detect()?; // sched_getaffinity and sysfs
    /// println!("NUMA nodes this process may run on: {:?}", placement.numa_nodes_used());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Environment`] naming the file that could not be read or parsed.
    pub fn detect() -> Result<Placement> {
        let dir = std::env::var_os("FERROMPI_NUMA_SYSFS")
            .map_or_else(|| PathBuf::from("/sys/devices/system/node"), PathBuf::from);
        Placement::from_sysfs(&dir, allowed_cpus()?)
    }

    /// The placement of a process allowed on `allowed_cpus`, on a machine whose NUMA nodes
    /// are described by `dir` (laid out as `/sys/devices/system/node`: `node0/cpulist`,
    /// `node0/meminfo`, …). A missing `dir` is one node holding every online CPU.
    ///
    /// ```
    /// use ferrompi::topology::Placement;
    /// // A missing directory means one node holding every allowed CPU.
    /// let placement = Placement::from_sysfs(std::path::Path::new("/nonexistent"), vec![0, 1])?;
    /// assert_eq!(placement.numa_nodes_used(), [0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Environment`] naming a file that exists but cannot be read or parsed.
    pub fn from_sysfs(dir: &Path, allowed_cpus: Vec<usize>) -> Result<Placement> {
        let mut numa_nodes = Vec::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(id) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix("node"))
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                let path = entry.path().join("cpulist");
                let cpus = read_file(&path).and_then(|text| {
                    parse_cpulist(&text).map_err(|e| environment(&path, &text, e.to_string()))
                })?;
                let memory_bytes = read_file(&entry.path().join("meminfo"))
                    .ok()
                    .and_then(|text| mem_total(&text));
                numa_nodes.push(NumaNode {
                    id,
                    cpus,
                    memory_bytes,
                });
            }
        }
        if numa_nodes.is_empty() {
            let online = Path::new("/sys/devices/system/cpu/online");
            let cpus = match read_file(online) {
                Ok(text) => parse_cpulist(&text).unwrap_or_else(|_| allowed_cpus.clone()),
                Err(_) => allowed_cpus.clone(),
            };
            numa_nodes.push(NumaNode {
                id: 0,
                cpus,
                memory_bytes: None,
            });
        }
        numa_nodes.sort_by_key(|n| n.id);
        Ok(Placement {
            allowed_cpus,
            numa_nodes,
        })
    }

    /// The NUMA nodes holding at least one of this process's CPUs.
    ///
    /// ```
    /// let placement = ferrompi::topology::Placement::detect()?;
    /// assert!(!placement.numa_nodes_used().is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn numa_nodes_used(&self) -> Vec<u32> {
        self.numa_nodes
            .iter()
            .filter(|n| {
                n.cpus
                    .iter()
                    .any(|c| self.allowed_cpus.binary_search(c).is_ok())
            })
            .map(|n| n.id)
            .collect()
    }

    /// The NUMA node this process is bound within: `Some` when all its CPUs lie in one node
    /// (always, on a machine with one NUMA node), `None` when they span several.
    ///
    /// ```
    /// let placement = ferrompi::topology::Placement::detect()?;
    /// match placement.bound_numa_node() {
    ///     Some(node) => println!("bound to NUMA node {node}"),
    ///     None => println!("not bound to one NUMA node"),
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn bound_numa_node(&self) -> Option<u32> {
        match self.numa_nodes_used()[..] {
            [node] => Some(node),
            _ => None,
        }
    }

    /// Whether this process may run on fewer CPUs than the machine has (it was bound).
    ///
    /// ```
    /// let placement = ferrompi::topology::Placement::detect()?;
    /// // Bound: fewer CPUs allowed than the machine has (taskset, mpirun --bind-to, srun --cpu-bind).
    /// println!("bound: {}", placement.is_bound());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_bound(&self) -> bool {
        let all: usize = self.numa_nodes.iter().map(|n| n.cpus.len()).sum();
        self.allowed_cpus.len() < all
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let used = self.numa_nodes_used();
        write!(f, "CPUs {}", format_cpulist(&self.allowed_cpus))?;
        match self.bound_numa_node() {
            Some(node) => write!(f, ", within NUMA node {node}")?,
            None => write!(
                f,
                ", unbound: spans NUMA nodes {}",
                used.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )?,
        }
        write!(f, " (machine: {} NUMA node(s)", self.numa_nodes.len())?;
        if let Some(node) = self
            .bound_numa_node()
            .and_then(|id| self.numa_nodes.iter().find(|n| n.id == id))
            .and_then(|n| n.memory_bytes)
        {
            write!(f, ", {} MiB on this one", node >> 20)?;
        }
        write!(f, ")")
    }
}

fn environment(path: &Path, value: &str, reason: String) -> Error {
    ErrorKind::Environment {
        variable: path.display().to_string(),
        value: value.trim().to_string(),
        reason,
    }
    .into()
}

/// The most bytes read from one file of the system's description: sysfs files are a page at
/// most, and a replacement directory (`FERROMPI_NUMA_SYSFS`) might hold anything, even a
/// link to `/dev/zero`.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// A file of the system's description, at most [`MAX_FILE_BYTES`] of it.
fn read_file(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| environment(path, "", e.to_string()))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(environment(
            path,
            "",
            format!("longer than {MAX_FILE_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// `Node 0 MemTotal:       6123456 kB` → bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.contains("MemTotal:"))?;
    let kb: u64 = line
        .split(':')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data for which all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size is the set's own.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Err(ErrorKind::Environment {
            variable: "sched_getaffinity".into(),
            value: String::new(),
            reason: std::io::Error::last_os_error().to_string(),
        }
        .into());
    }
    let max = 8 * std::mem::size_of_val(&set);
    // SAFETY: `set` is initialised and every index is below its capacity in bits.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// How [`Communicator::split_numa`] grouped the bound processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumaSource {
    /// The MPI's own split type, following the MPI's view of the hardware.
    Mpi(SplitType),
    /// The NUMA node numbers Linux reports ([`Placement::bound_numa_node`]).
    OperatingSystem,
}

/// The NUMA split type of the installed MPI, if it has one.
fn mpi_numa_split() -> Option<SplitType> {
    if cfg!(ferrompi_ompi_comm_types) {
        Some(SplitType::OpenMpi(OpenMpiLocality::Numa))
    } else if cfg!(ferrompi_hw_guided) {
        Some(SplitType::HwGuided(crate::comm::HwResource::NumaNode))
    } else {
        None
    }
}

/// What [`numa_groups`] needs of a process's placement: the Linux NUMA node it is bound within,
/// and whether it was bound at all (allowed on fewer CPUs than the machine has).
fn numa_binding(placement: Option<&Placement>) -> (Option<u32>, bool) {
    placement.map_or((None, false), |p| (p.bound_numa_node(), p.is_bound()))
}

/// Groups the ranks of `node` (one node's communicator) by NUMA domain. Collective over `node`.
///
/// The MPI is asked only about processes that were bound: for the others Open MPI 4.1 answers
/// a group of one per process and MPICH `MPI_COMM_NULL`, even on a single-domain machine. Its
/// answer is used when it gave a group to every process within a domain, and every such process
/// was bound; otherwise every process of the node uses Linux's node numbers.
fn numa_groups<'env>(
    node: &Communicator<'env>,
    (within, bound): (Option<u32>, bool),
) -> Result<(Option<Communicator<'env>>, NumaSource)> {
    if let Some(kind) = mpi_numa_split() {
        let ask = within.is_some() && bound;
        let group = node.split_type(ask.then_some(kind), node.rank())?;
        let mine = i32::from(within.is_none() || group.is_some());
        let mut all = [0];
        node.allreduce(&[mine], &mut all, Min)?;
        if all[0] == 1 {
            return Ok((group, NumaSource::Mpi(kind)));
        }
    }
    let color = within.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
    Ok((node.split(color, node.rank())?, NumaSource::OperatingSystem))
}

/// The node and NUMA hierarchy of a communicator's processes.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let h = world.hierarchy()?; // collective
/// assert!(h.node.size() >= 1);
/// // One rank per node leads; the others get None.
/// assert_eq!(h.node_leaders.is_some(), h.node.rank() == 0);
/// println!("{h}");
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// The processes of this communicator in the same NUMA domain as this one, within its
    /// node: `None` for a process not bound within one NUMA domain (see the
    /// [module docs](self) for how boundness is decided and which MPI split is used).
    /// Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // The ranks of this node bound to this rank's NUMA node; None when not bound to one.
    /// if let Some(numa) = world.split_numa()? {
    ///     assert!(numa.size() >= 1);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::split_type`] and [`Communicator::split`]. A placement Linux cannot
    /// report counts as unbound.
    pub fn split_numa(&self) -> Result<Option<Communicator<'env>>> {
        let binding = numa_binding(Placement::detect().ok().as_ref());
        if self.is_known_node_local() {
            return Ok(numa_groups(self, binding)?.0);
        }
        Ok(numa_groups(&self.split_shared(self.rank())?, binding)?.0)
    }

    /// Node, node leaders, NUMA groups and NUMA leaders, host names and binding of every rank,
    /// and the Slurm job, in one collective call. Ranks keep their order in every communicator
    /// made.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// println!("{h}"); // nodes, leaders, NUMA groups, hosts, the Slurm job
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::split_type`]; [`ErrorKind::Environment`] for a malformed Slurm variable
    /// (after every collective is done, so no rank is left waiting).
    pub fn hierarchy(&self) -> Result<Hierarchy<'env>> {
        let placement = Placement::detect();
        let binding = numa_binding(placement.as_ref().ok());
        let bound = binding.0;
        let node = self.split_shared(self.rank())?;
        let (numa, numa_source) = numa_groups(&node, binding)?;
        let node_leader = node.rank() == 0;
        let numa_leader = numa.as_ref().is_some_and(|c| c.rank() == 0);
        let leaders = |is: bool| self.split(is.then_some(0), self.rank());
        let node_leaders = leaders(node_leader)?;
        let numa_leaders = leaders(numa_leader)?;

        // Per rank: the rank of its node's leader here, its NUMA group's size (0: none) and
        // node number (-1: unbound), and its host name.
        let leader_here = node_leader_rank(self, &node)?;
        let record = [
            leader_here,
            numa.as_ref().map_or(0, Communicator::size),
            bound.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX)),
        ];
        let size = usize::try_from(self.size()).unwrap_or(0);
        let mut records = vec![0i32; 3 * size];
        self.allgather(&record, &mut records)?;
        let width = usize::try_from(crate::ffi::MPI_MAX_PROCESSOR_NAME).unwrap_or(256);
        let mut name = processor_name()?.into_bytes();
        name.resize(width, 0);
        let mut names = vec![0u8; width * size];
        self.allgather(&name, &mut names)?;

        let mut leaders_seen: Vec<i32> = records.chunks(3).map(|r| r[0]).collect();
        leaders_seen.sort_unstable();
        leaders_seen.dedup();
        let ranks = records
            .chunks(3)
            .zip(names.chunks(width))
            .map(|(r, host)| RankPlace {
                host: String::from_utf8_lossy(host.split(|&b| b == 0).next().unwrap_or(&[]))
                    .into_owned(),
                node: leaders_seen.binary_search(&r[0]).unwrap_or(0),
                numa_size: (r[1] > 0).then_some(r[1]),
                numa_node: u32::try_from(r[2]).ok(),
            })
            .collect();
        Ok(Hierarchy {
            rank: self.rank(),
            node,
            node_leaders,
            numa,
            numa_leaders,
            numa_source,
            ranks,
            placement: placement?,
            slurm: SlurmJob::from_env()?,
            launcher: Launcher::detect(),
        })
    }
}

/// The rank in `comm` of the leader (rank 0) of `node`. Collective over `node`.
fn node_leader_rank(comm: &Communicator<'_>, node: &Communicator<'_>) -> Result<i32> {
    let mut leader = [comm.rank()];
    node.bcast(&mut leader, 0)?;
    Ok(leader[0])
}

/// Where one rank runs, as [`Hierarchy::ranks`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlace {
    /// Its host name (`MPI_Get_processor_name`).
    pub host: String,
    /// Its node's index: nodes are numbered in the order of their lowest rank.
    pub node: usize,
    /// The size of its NUMA group; `None` when it is not bound within one NUMA domain.
    pub numa_size: Option<i32>,
    /// The Linux NUMA node it is bound within.
    pub numa_node: Option<u32>,
}

/// The rank hierarchy of a communicator, made by [`Communicator::hierarchy`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Hierarchy<'env> {
    /// This process's rank in the communicator the hierarchy was made from.
    pub rank: i32,
    /// The ranks of this node.
    pub node: Communicator<'env>,
    /// Rank 0 of every node (`Some` on those ranks only), in rank order.
    pub node_leaders: Option<Communicator<'env>>,
    /// The ranks of this node in this NUMA domain; `None` when this process is unbound.
    pub numa: Option<Communicator<'env>>,
    /// Rank 0 of every NUMA group, across all nodes (`Some` on those ranks only).
    pub numa_leaders: Option<Communicator<'env>>,
    /// How the NUMA groups were formed.
    pub numa_source: NumaSource,
    /// Where every rank runs, in rank order.
    pub ranks: Vec<RankPlace>,
    /// This process's CPUs and the machine's NUMA nodes.
    pub placement: Placement,
    /// The Slurm job, when running in one.
    pub slurm: Option<SlurmJob>,
    /// How the processes were started.
    pub launcher: Launcher,
}

impl Hierarchy<'_> {
    /// The number of nodes.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// assert!(h.node_count() >= 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn node_count(&self) -> usize {
        self.ranks.iter().map(|r| r.node + 1).max().unwrap_or(0)
    }

    /// This process's node index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// assert!(h.node_index() < h.node_count());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn node_index(&self) -> usize {
        self.ranks
            .get(usize::try_from(self.rank).unwrap_or(0))
            .map_or(0, |r| r.node)
    }

    /// How many ranks run on each node, by node index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// assert_eq!(h.ranks_per_node().iter().sum::<usize>(), world.size() as usize);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn ranks_per_node(&self) -> Vec<usize> {
        let mut counts = vec![0; self.node_count()];
        for r in &self.ranks {
            counts[r.node] += 1;
        }
        counts
    }

    /// The host name of each node, by node index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// assert_eq!(h.node_hosts().len(), h.node_count());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn node_hosts(&self) -> Vec<&str> {
        let mut hosts = vec![""; self.node_count()];
        for r in self.ranks.iter().rev() {
            hosts[r.node] = &r.host;
        }
        hosts
    }

    /// Threads this rank should run: Slurm's answer when in a Slurm step
    /// ([`SlurmJob::threads_per_rank`]), else its CPUs when it is bound, else the node's CPUs
    /// shared by the node's ranks. At least 1.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// let pool = h.threads_per_rank(); // from Slurm, else the CPUs this rank may use
    /// assert!(pool >= 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn threads_per_rank(&self) -> usize {
        if let Some(n) = self.slurm.as_ref().and_then(SlurmJob::threads_per_rank) {
            return n as usize;
        }
        let cpus = self.placement.allowed_cpus.len();
        let shared = if self.placement.is_bound() {
            cpus
        } else {
            cpus / usize::try_from(self.node.size()).unwrap_or(1).max(1)
        };
        shared.max(1)
    }

    /// Checks a "one rank per NUMA domain" deployment: every rank is bound within a NUMA
    /// domain and alone in its NUMA group. The answer is the same on every rank.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// if let Err(e) = h.check_one_rank_per_numa() {
    ///     println!("{e}"); // which ranks are unbound or share a domain, and how to launch instead
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] saying which ranks are unbound or share a domain, and how
    /// to launch instead.
    pub fn check_one_rank_per_numa(&self) -> Result<()> {
        let unbound: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].numa_size.is_none())
            .collect();
        let shared: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].numa_size.is_some_and(|s| s > 1))
            .collect();
        if unbound.is_empty() && shared.is_empty() {
            return Ok(());
        }
        let list = |ranks: &[usize]| {
            ranks
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut reason = String::from("not one rank per NUMA domain:");
        if !unbound.is_empty() {
            reason += &format!(" ranks {} are not bound within one domain;", list(&unbound));
        }
        if !shared.is_empty() {
            reason += &format!(" ranks {} share a domain;", list(&shared));
        }
        reason += " launch with `srun --cpu-bind=ldoms` or `mpirun --map-by numa --bind-to numa`";
        Err(ErrorKind::InvalidArgument {
            operation: "check_one_rank_per_numa",
            reason,
        }
        .into())
    }
}

impl fmt::Display for Hierarchy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hosts = self.node_hosts();
        writeln!(
            f,
            "{} rank(s) on {} node(s), launched by {:?}; NUMA groups from {:?}",
            self.ranks.len(),
            hosts.len(),
            self.launcher,
            self.numa_source
        )?;
        for (index, host) in hosts.iter().enumerate() {
            let ranks: Vec<usize> = (0..self.ranks.len())
                .filter(|&r| self.ranks[r].node == index)
                .collect();
            let numa: Vec<String> = ranks
                .iter()
                .map(
                    |&r| match (self.ranks[r].numa_size, self.ranks[r].numa_node) {
                        (None, _) => format!("{r}:unbound"),
                        (Some(s), Some(n)) => format!("{r}:numa{n}/{s}"),
                        (Some(s), None) => format!("{r}:/{s}"),
                    },
                )
                .collect();
            writeln!(
                f,
                "  node {index} {host}: {} rank(s) [{}]",
                ranks.len(),
                numa.join(" ")
            )?;
        }
        writeln!(
            f,
            "  rank {}: node rank {} of {}, {}; {} thread(s)",
            self.rank,
            self.node.rank(),
            self.node.size(),
            self.placement,
            self.threads_per_rank()
        )?;
        match &self.slurm {
            Some(job) => write!(f, "  slurm {job}"),
            None => write!(f, "  not in a Slurm job"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n").unwrap(),
            [0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpulist("").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_cpulist("3,1-2,2").unwrap(), [1, 2, 3]);
        for bad in ["a", "1-", "-1", "3-1", "1,,2", "99999999", "0-70000", "+1"] {
            assert!(parse_cpulist(bad).is_err(), "{bad:?} should fail");
        }
        for list in ["0", "0-3", "0-1,4,6-9", "", "0-65536", "63-64,127-129"] {
            assert_eq!(format_cpulist(&parse_cpulist(list).unwrap()), list);
        }
        // 131 KB of full ranges: at most 65537 CPUs, at once.
        let start = std::time::Instant::now();
        let huge = vec!["0-65536"; 20_000].join(",");
        assert_eq!(parse_cpulist(&huge).unwrap().len(), MAX_CPU + 1);
        assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    }

    proptest::proptest! {
        /// Any short text: never a panic; what parses is sorted, unique and bounded.
        #[test]
        fn cpulists_of_any_text_are_sets(list in "[0-9,\\- \n]{0,40}") {
            if let Ok(cpus) = parse_cpulist(&list) {
                proptest::prop_assert!(cpus.windows(2).all(|w| w[0] < w[1]));
                proptest::prop_assert!(cpus.iter().all(|&c| c <= MAX_CPU));
            }
        }

        /// Any set of CPUs, written compactly and parsed back, in any order and with repeats.
        #[test]
        fn cpulists_round_trip(
            mut cpus in proptest::collection::vec(0usize..=MAX_CPU, 0..200),
            repeats in 0usize..3,
        ) {
            let parts: Vec<String> = cpus.iter().rev().map(ToString::to_string).collect();
            let mut shuffled = parts.join(",");
            for _ in 0..repeats {
                shuffled = format!("{shuffled},{}", parts.join(","));
            }
            cpus.sort_unstable();
            cpus.dedup();
            let compact = format_cpulist(&cpus);
            proptest::prop_assert_eq!(parse_cpulist(&compact).unwrap(), cpus.clone());
            if !cpus.is_empty() {
                proptest::prop_assert_eq!(parse_cpulist(&shuffled).unwrap(), cpus);
            }
        }
    }

    fn fake_sysfs(nodes: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ferrompi-sysfs-{}-{}",
            std::process::id(),
            nodes.join("_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (i, cpus) in nodes.iter().enumerate() {
            let node = dir.join(format!("node{i}"));
            std::fs::create_dir_all(&node).unwrap();
            std::fs::write(node.join("cpulist"), format!("{cpus}\n")).unwrap();
            std::fs::write(
                node.join("meminfo"),
                format!("Node {i} MemTotal:       1048576 kB\nNode {i} MemFree: 1 kB\n"),
            )
            .unwrap();
        }
        std::fs::create_dir_all(dir.join("power")).unwrap();
        dir
    }

    #[test]
    fn placements() {
        let dir = fake_sysfs(&["0-3", "4-7"]);
        let p = Placement::from_sysfs(&dir, vec![4, 5]).unwrap();
        assert_eq!(p.numa_nodes.len(), 2);
        assert_eq!(p.numa_nodes[1].memory_bytes, Some(1 << 30));
        assert_eq!(p.bound_numa_node(), Some(1));
        assert!(p.is_bound());
        assert!(p.to_string().contains("within NUMA node 1"), "{p}");
        let p = Placement::from_sysfs(&dir, vec![3, 4]).unwrap();
        assert_eq!(
            (p.bound_numa_node(), p.numa_nodes_used()),
            (None, vec![0, 1])
        );
        assert!(
            p.to_string().contains("unbound: spans NUMA nodes 0,1"),
            "{p}"
        );
        let all = Placement::from_sysfs(&dir, (0..8).collect()).unwrap();
        assert!(!all.is_bound());
        // One NUMA node: every process is within it.
        let one = fake_sysfs(&["0-1"]);
        let p = Placement::from_sysfs(&one, vec![0, 1]).unwrap();
        assert_eq!(p.bound_numa_node(), Some(0));
        // No directory: one node of the online CPUs.
        let p = Placement::from_sysfs(Path::new("/nonexistent"), vec![0]).unwrap();
        assert_eq!(p.numa_nodes.len(), 1);
        assert_eq!(p.bound_numa_node(), Some(0));
        // A malformed file names itself.
        let bad = fake_sysfs(&["0-x"]);
        let e = Placement::from_sysfs(&bad, vec![0]).unwrap_err();
        assert!(e.to_string().contains("node0/cpulist"), "{e}");
        // A file without end (a link to /dev/zero) is an error after a mebibyte.
        let endless = fake_sysfs(&["0"]);
        let cpulist = endless.join("node0/cpulist");
        std::fs::remove_file(&cpulist).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &cpulist).unwrap();
        let e = Placement::from_sysfs(&endless, vec![0]).unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        for d in [dir, one, bad, endless] {
            let _ = std::fs::remove_dir_all(d);
        }
        // The real machine.
        let real = Placement::detect().unwrap();
        assert!(!real.allowed_cpus.is_empty() && !real.numa_nodes.is_empty());
    }

    #[test]
    fn cpulist_parser_never_panics() {
        let alphabet = b"0123456789-, x";
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let s: String = (0..(state % 12))
                .map(|i| alphabet[((state >> (4 * i)) % alphabet.len() as u64) as usize] as char)
                .collect();
            if let Ok(cpus) = parse_cpulist(&s) {
                assert!(cpus.len() <= MAX_CPU + 1);
            }
        }
    }
}
