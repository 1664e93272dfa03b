//! Graph and distributed-graph virtual topologies (MPI-4.0 §8.5.3, §8.5.4): processes joined
//! by edges, for meshes and irregular decompositions whose neighbours are not a grid's.
//!
//! [`Communicator::graph_create`] makes a [`GraphCommunicator`] from the whole graph, the same
//! on every process; [`Communicator::dist_graph_create_adjacent`] and
//! [`Communicator::dist_graph_create`] make a [`DistGraphCommunicator`] from each process's
//! part of it, with or without weights. Both are [`TopologyCommunicator`]s, so the
//! neighbourhood collectives run on them. The neighbour lists they hand back are read from MPI
//! (`MPI_Graph_neighbors`, `MPI_Dist_graph_neighbors`) once, when the communicator is made.
//!
//! ```
//! # let mpi = ferrompi::Mpi::init()?;
//! # let world = mpi.world();
//! // Each process receives from the one before it and sends to the one after (a ring).
//! let (me, n) = (world.rank(), world.size());
//! let ring = world.dist_graph_create_adjacent(&[(me + n - 1) % n], &[(me + 1) % n], None, false)?;
//! assert_eq!(ring.sources(), &[(me + n - 1) % n]);
//! let mut from_before = [0i32];
//! ring.neighbor_allgather(&[me], &mut from_before)?;
//! assert_eq!(from_before[0], (me + n - 1) % n);
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! # Bad input
//! A graph's arguments are the same on every process, so each checks them alike before MPI is
//! called. A distributed graph's differ from process to process: each checks its own (ranks
//! inside the communicator, lengths that agree, weights and degrees not negative) and the
//! processes then agree, in one `MPI_Allreduce`, that every one's were good and that all or
//! none gave weights; otherwise every process returns [`ErrorKind::InvalidArgument`] and none
//! calls MPI's constructor, which would hang or abort.

use super::neighbor::TopologyCommunicator;
use super::{Communicator, invalid_argument as invalid, unexpected_null};
use crate::datatype::count_of;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::op::Max;
use std::ffi::c_int;
use std::ops::Deref;

/// A communicator whose processes form a graph given whole on every process (`MPI_Graph_create`,
/// MPI-4.0 §8.5.3). A [`TopologyCommunicator`] (through `Deref`), each process's neighbours
/// those [`neighbors`](Self::neighbors) lists, in the neighbourhood collectives both the ones
/// it receives from and the ones it sends to.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// // A star: node 0 joined to every other node, both ways.
/// let n = world.size();
/// let mut index = vec![n - 1];
/// index.extend((1..n).map(|k| n - 1 + k));
/// let mut edges: Vec<i32> = (1..n).collect();
/// edges.extend(std::iter::repeat_n(0, (n - 1) as usize));
/// let star = world.graph_create(&index, &edges, false)?.expect("every process is a node");
/// let expected = if star.rank() == 0 { (1..n).collect() } else { vec![0] };
/// assert_eq!(star.neighbors(), expected.as_slice());
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[derive(Debug)]
pub struct GraphCommunicator<'env> {
    topo: TopologyCommunicator<'env>,
    index: Box<[i32]>,
    edges: Box<[i32]>,
    neighbors: Box<[i32]>,
}

impl<'env> Deref for GraphCommunicator<'env> {
    type Target = TopologyCommunicator<'env>;

    fn deref(&self) -> &TopologyCommunicator<'env> {
        &self.topo
    }
}

/// A communicator whose processes form a directed graph, each process having given its own
/// part (`MPI_Dist_graph_create_adjacent`, `MPI_Dist_graph_create`, MPI-4.0 §8.5.4). A
/// [`TopologyCommunicator`] (through `Deref`) whose neighbourhood collectives receive from
/// [`sources`](Self::sources) and send to [`destinations`](Self::destinations).
#[derive(Debug)]
pub struct DistGraphCommunicator<'env> {
    topo: TopologyCommunicator<'env>,
    sources: Box<[i32]>,
    destinations: Box<[i32]>,
    /// The sources' and the destinations' weights, in a weighted graph.
    weights: Option<Weights>,
}

/// A weighted distributed graph's weights: the sources' and the destinations'.
type Weights = (Box<[i32]>, Box<[i32]>);

impl<'env> Deref for DistGraphCommunicator<'env> {
    type Target = TopologyCommunicator<'env>;

    fn deref(&self) -> &TopologyCommunicator<'env> {
        &self.topo
    }
}

/// A vector of `len` zeros, `len` an MPI count.
fn zeros(len: c_int) -> Vec<c_int> {
    vec![0; usize::try_from(len).unwrap_or(0)]
}

/// Checks a graph for a communicator of `size` processes: `index` of at most `size` nodes,
/// non-decreasing from 0 and ending at the number of edges, every edge a node. Returns the
/// number of nodes.
fn graph(index: &[i32], edges: &[i32], size: i32, operation: &'static str) -> Result<c_int> {
    let nnodes = count_of::<i32>(index.len(), operation)?;
    count_of::<i32>(edges.len(), operation)?;
    if nnodes == 0 || nnodes > size {
        return Err(invalid(
            operation,
            format!("a graph of {nnodes} nodes on a communicator of {size} processes"),
        ));
    }
    let mut previous = 0;
    for (node, &end) in index.iter().enumerate() {
        if end < previous {
            return Err(invalid(
                operation,
                format!("index[{node}] = {end} is below the previous entry, {previous}"),
            ));
        }
        previous = end;
    }
    if usize::try_from(previous).ok() != Some(edges.len()) {
        return Err(invalid(
            operation,
            format!(
                "the index ends at {previous} but there are {} edges",
                edges.len()
            ),
        ));
    }
    if let Some(&edge) = edges.iter().find(|&&e| !(0..nnodes).contains(&e)) {
        return Err(invalid(
            operation,
            format!("edge to node {edge} of a graph of {nnodes} nodes"),
        ));
    }
    Ok(nnodes)
}

/// `MPI_Graph_neighbors_count` and `MPI_Graph_neighbors` of `rank`.
///
/// # Safety
/// `comm` has a graph topology of which `rank` is a node; the calling thread holds the gate.
unsafe fn graph_neighbors(
    comm: ffi::MPI_Comm,
    rank: c_int,
    operation: &'static str,
) -> Result<Vec<i32>> {
    let mut count: c_int = 0;
    // SAFETY: per the contract; MPI writes one int.
    let rc = unsafe { ffi::MPI_Graph_neighbors_count(comm, rank, &mut count) };
    check(rc, operation)?;
    let mut neighbors = zeros(count);
    // SAFETY: `count` ints for MPI to fill.
    let rc = unsafe { ffi::MPI_Graph_neighbors(comm, rank, count, neighbors.as_mut_ptr()) };
    check(rc, operation)?;
    Ok(neighbors)
}

impl<'env> GraphCommunicator<'env> {
    /// Wraps `comm`, a graph communicator MPI just made, with its graph and this process's
    /// neighbours (`MPI_Graphdims_get`, `MPI_Graph_get`, `MPI_Graph_neighbors`).
    ///
    /// # Safety
    /// `comm` has a graph topology, and the calling thread holds the thread gate.
    unsafe fn of(
        comm: Communicator<'env>,
        operation: &'static str,
    ) -> std::result::Result<Self, (Communicator<'env>, Error)> {
        let read = || -> Result<_> {
            let (mut nnodes, mut nedges): (c_int, c_int) = (0, 0);
            // SAFETY: a graph communicator (the caller's promise); MPI writes two ints.
            let rc = unsafe { ffi::MPI_Graphdims_get(comm.raw, &mut nnodes, &mut nedges) };
            check(rc, operation)?;
            let (mut index, mut edges) = (zeros(nnodes), zeros(nedges));
            // SAFETY: arrays of `nnodes` and `nedges` ints, which MPI fills.
            let rc = unsafe {
                ffi::MPI_Graph_get(
                    comm.raw,
                    nnodes,
                    nedges,
                    index.as_mut_ptr(),
                    edges.as_mut_ptr(),
                )
            };
            check(rc, operation)?;
            // SAFETY: a graph communicator of which this process is a node; the gate is held.
            let neighbors = unsafe { graph_neighbors(comm.raw, comm.rank, operation) }?;
            Ok((index, edges, neighbors))
        };
        match read() {
            Ok((index, edges, neighbors)) => {
                let degree = count_of::<i32>(neighbors.len(), operation).unwrap_or(c_int::MAX);
                Ok(GraphCommunicator {
                    topo: TopologyCommunicator::with_degrees(comm, degree, degree),
                    index: index.into(),
                    edges: edges.into(),
                    neighbors: neighbors.into(),
                })
            }
            Err(e) => Err((comm, e)),
        }
    }

    /// The graph's index, as given to [`graph_create`](Communicator::graph_create): node `i`'s
    /// edges end at `index()[i]` (`MPI_Graph_get`).
    pub fn index(&self) -> &[i32] {
        &self.index
    }

    /// The graph's edges, node by node (`MPI_Graph_get`).
    pub fn edges(&self) -> &[i32] {
        &self.edges
    }

    /// The number of nodes (`MPI_Graphdims_get`).
    pub fn nnodes(&self) -> usize {
        self.index.len()
    }

    /// This process's neighbours, in the order of its edges (`MPI_Graph_neighbors`).
    pub fn neighbors(&self) -> &[i32] {
        &self.neighbors
    }

    /// `MPI_Graph_neighbors` (MPI-4.0 §8.5.5): the neighbours of the process `rank`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // A ring, each node joined to the next.
    /// let n = world.size();
    /// let index: Vec<i32> = (1..=n).collect();
    /// let edges: Vec<i32> = (0..n).map(|k| (k + 1) % n).collect();
    /// let ring = world.graph_create(&index, &edges, false)?.unwrap();
    /// assert_eq!(ring.neighbors_of(n - 1)?, [0]);
    /// assert!(ring.neighbors_of(n).is_err());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for a rank outside the communicator;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn neighbors_of(&self, rank: i32) -> Result<Vec<i32>> {
        const OP: &str = "graph_neighbors";
        self.check_rank(rank, "rank", OP)?;
        let _gate = self.enter(OP)?;
        // SAFETY: a graph communicator, a rank of it (every rank is a node); the gate is held.
        unsafe { graph_neighbors(self.raw, rank, OP) }
    }
}

/// A distributed graph's weights as MPI takes them: `MPI_UNWEIGHTED` without,
/// `MPI_WEIGHTS_EMPTY` for no edges with.
fn weights_ptr(weights: Option<&[i32]>) -> *const c_int {
    let (unweighted, empty) = ffi::graph_weights();
    match weights {
        None => unweighted,
        Some([]) => empty,
        Some(w) => w.as_ptr(),
    }
}

impl<'env> DistGraphCommunicator<'env> {
    /// Wraps `comm`, a distributed-graph communicator MPI just made, with this process's
    /// neighbours and weights (`MPI_Dist_graph_neighbors_count`, `MPI_Dist_graph_neighbors`).
    ///
    /// # Safety
    /// `comm` has a distributed-graph topology, and the calling thread holds the thread gate.
    unsafe fn of(
        comm: Communicator<'env>,
        operation: &'static str,
    ) -> std::result::Result<Self, (Communicator<'env>, Error)> {
        let read = || -> Result<_> {
            let (mut indegree, mut outdegree, mut weighted): (c_int, c_int, c_int) = (0, 0, 0);
            // SAFETY: a distributed-graph communicator; MPI writes three ints.
            let rc = unsafe {
                ffi::MPI_Dist_graph_neighbors_count(
                    comm.raw,
                    &mut indegree,
                    &mut outdegree,
                    &mut weighted,
                )
            };
            check(rc, operation)?;
            let (mut sources, mut destinations) = (zeros(indegree), zeros(outdegree));
            let (mut source_weights, mut destination_weights) = (zeros(indegree), zeros(outdegree));
            let (unweighted, _) = ffi::graph_weights();
            let weights = |w: &mut Vec<c_int>| {
                if weighted != 0 {
                    w.as_mut_ptr()
                } else {
                    unweighted.cast_mut()
                }
            };
            let (sw, dw) = (
                weights(&mut source_weights),
                weights(&mut destination_weights),
            );
            // SAFETY: four arrays of the degrees MPI just gave (the weights `MPI_UNWEIGHTED`
            // in a graph without), which MPI fills.
            let rc = unsafe {
                ffi::MPI_Dist_graph_neighbors(
                    comm.raw,
                    indegree,
                    sources.as_mut_ptr(),
                    sw,
                    outdegree,
                    destinations.as_mut_ptr(),
                    dw,
                )
            };
            check(rc, operation)?;
            let weights =
                (weighted != 0).then(|| (source_weights.into(), destination_weights.into()));
            Ok((indegree, outdegree, sources, destinations, weights))
        };
        match read() {
            Ok((indegree, outdegree, sources, destinations, weights)) => {
                Ok(DistGraphCommunicator {
                    topo: TopologyCommunicator::with_degrees(comm, indegree, outdegree),
                    sources: sources.into(),
                    destinations: destinations.into(),
                    weights,
                })
            }
            Err(e) => Err((comm, e)),
        }
    }

    /// The processes this one receives from in the neighbourhood collectives, in MPI's order
    /// (`MPI_Dist_graph_neighbors`): an edge given twice appears twice.
    pub fn sources(&self) -> &[i32] {
        &self.sources
    }

    /// The processes this one sends to, in MPI's order (`MPI_Dist_graph_neighbors`).
    pub fn destinations(&self) -> &[i32] {
        &self.destinations
    }

    /// Whether the graph was made with weights.
    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The weight of each edge from [`sources`](Self::sources), in a weighted graph.
    pub fn source_weights(&self) -> Option<&[i32]> {
        self.weights.as_ref().map(|(s, _)| &s[..])
    }

    /// The weight of each edge to [`destinations`](Self::destinations), in a weighted graph.
    pub fn destination_weights(&self) -> Option<&[i32]> {
        self.weights.as_ref().map(|(_, d)| &d[..])
    }
}

/// What a process found wrong with its part of a distributed graph, if anything.
fn dist_graph_part(
    comm: &Communicator<'_>,
    ranks: &[(&str, &[i32])],
    weights: &[(&str, Option<&[i32]>, usize)],
) -> Option<String> {
    for &(what, list) in ranks {
        if let Some(&r) = list.iter().find(|&&r| !(0..comm.size).contains(&r)) {
            return Some(format!(
                "{what} {r} is not a rank of the communicator of {}",
                comm.size
            ));
        }
    }
    for &(what, w, edges) in weights {
        match w {
            Some(w) if w.len() != edges => {
                return Some(format!("{} {what} for {edges} edges", w.len()));
            }
            Some(w) if w.iter().any(|&v| v < 0) => {
                return Some(format!("a negative weight among the {what}"));
            }
            _ => {}
        }
    }
    None
}

impl<'env> Communicator<'env> {
    /// `MPI_Graph_create` (MPI-4.0 §8.5.3): a communicator whose processes form the graph of
    /// `index.len()` nodes in which node `i`'s neighbours are `edges[index[i - 1]..index[i]]`
    /// (`index[-1]` taken as 0). Every process passes the same graph. With `reorder`, MPI may
    /// number the processes anew; a process left out of a graph of fewer nodes than the
    /// communicator has gets `None`. Self-loops and repeated edges are allowed. Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // One node with a self-loop.
    /// let one = world.graph_create(&[1], &[0], false)?;
    /// assert_eq!(one.as_ref().map(|g| g.neighbors().to_vec()), (world.rank() == 0).then(|| vec![0]));
    /// assert!(world.graph_create(&[1], &[1], false).is_err()); // no node 1
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for no node or more nodes than processes, an index that
    /// decreases or does not end at `edges.len()`, or an edge to no node;
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn graph_create(
        &self,
        index: &[i32],
        edges: &[i32],
        reorder: bool,
    ) -> Result<Option<GraphCommunicator<'env>>> {
        const OP: &str = "graph_create";
        let nnodes = graph(index, edges, self.size, OP)?;
        let made = {
            let _gate = self.enter(OP)?;
            let mut raw = ffi::MPI_COMM_NULL;
            // SAFETY: a valid communicator and a checked graph; MPI writes the handle.
            let rc = unsafe {
                ffi::MPI_Graph_create(
                    self.raw,
                    nnodes,
                    index.as_ptr(),
                    edges.as_ptr(),
                    c_int::from(reorder),
                    &mut raw,
                )
            };
            check(rc, OP)?;
            // SAFETY: MPI just made `raw` (or `MPI_COMM_NULL`) for us, under the gate we hold.
            let Some(comm) = (unsafe { Communicator::adopt(raw, OP) })? else {
                return Ok(None);
            };
            // SAFETY: made by MPI_Graph_create; the gate is held.
            unsafe { GraphCommunicator::of(comm, OP) }
        };
        // On error the new communicator drops here, outside the gate.
        made.map(Some).map_err(|(_, e)| e)
    }

    /// `MPI_Graph_map` (MPI-4.0 §8.5.8): the rank this process would have in the graph made
    /// with reordering, or `None` if it would be left out. Collective; makes nothing.
    ///
    /// # Errors
    /// As [`graph_create`](Self::graph_create).
    pub fn graph_map(&self, index: &[i32], edges: &[i32]) -> Result<Option<i32>> {
        const OP: &str = "graph_map";
        let nnodes = graph(index, edges, self.size, OP)?;
        let mut rank: c_int = 0;
        // SAFETY: a valid communicator and a checked graph; MPI writes one int.
        let rc = self.gated(OP, || unsafe {
            ffi::MPI_Graph_map(self.raw, nnodes, index.as_ptr(), edges.as_ptr(), &mut rank)
        })?;
        check(rc, OP)?;
        Ok((rank != crate::c_int_const!(ffi::MPI_UNDEFINED)).then_some(rank))
    }

    /// Agrees, across the communicator, that every process's part of a distributed graph
    /// was good (`problem` is this process's complaint) and that all or none gave weights.
    fn agree_on_parts(
        &self,
        problem: Option<String>,
        weighted: bool,
        operation: &'static str,
    ) -> Result<()> {
        let mine = [
            i32::from(problem.is_some()),
            i32::from(weighted),
            i32::from(!weighted),
        ];
        let mut all = [0i32; 3];
        self.allreduce(&mine, &mut all, Max)?;
        if let Some(reason) = problem {
            return Err(invalid(operation, reason));
        }
        if all[0] != 0 {
            return Err(invalid(
                operation,
                "another process's part of the graph is invalid".to_string(),
            ));
        }
        if all[1] != 0 && all[2] != 0 {
            return Err(invalid(
                operation,
                "some processes gave weights and others did not: all or none must".to_string(),
            ));
        }
        Ok(())
    }

    /// Makes a distributed-graph communicator with `create`, which calls MPI's constructor
    /// and returns its code, under the gate.
    fn dist_graph(
        &self,
        operation: &'static str,
        create: impl FnOnce(&mut ffi::MPI_Comm) -> c_int,
    ) -> Result<DistGraphCommunicator<'env>> {
        let made = {
            let _gate = self.enter(operation)?;
            let mut raw = ffi::MPI_COMM_NULL;
            check(create(&mut raw), operation)?;
            // SAFETY: MPI just made `raw` for us, under the gate we hold.
            let comm = unsafe { Communicator::adopt(raw, operation) }?
                .ok_or_else(|| unexpected_null(operation))?;
            // SAFETY: made by a distributed-graph constructor; the gate is held.
            unsafe { DistGraphCommunicator::of(comm, operation) }
        };
        // On error the new communicator drops here, outside the gate.
        made.map_err(|(_, e)| e)
    }

    /// `MPI_Dist_graph_create_adjacent` (MPI-4.0 §8.5.4): a communicator whose processes
    /// form a directed graph, each process naming the processes it receives from (`sources`)
    /// and sends to (`destinations`), and, in a weighted graph, each edge's weight on both
    /// sides (`weights`: the sources' then the destinations'; `None` is `MPI_UNWEIGHTED`).
    /// Every edge is given by both its ends. With `reorder`, MPI may number the processes
    /// anew. Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (me, n) = (world.rank(), world.size());
    /// let (back, ahead) = ((me + n - 1) % n, (me + 1) % n);
    /// let ring = world.dist_graph_create_adjacent(&[back], &[ahead], Some((&[2][..], &[2][..])), false)?;
    /// assert_eq!(ring.destinations(), &[ahead]);
    /// assert_eq!(ring.destination_weights(), Some(&[2][..]));
    /// assert!(world.dist_graph_create_adjacent(&[n], &[], None, false).is_err()); // no rank n
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// On every process, before MPI's constructor is called: [`ErrorKind::InvalidArgument`] if
    /// any process named a rank outside the communicator, gave weights of another length than
    /// its neighbours or a negative weight, or if some gave weights and others did not;
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn dist_graph_create_adjacent(
        &self,
        sources: &[i32],
        destinations: &[i32],
        weights: Option<(&[i32], &[i32])>,
        reorder: bool,
    ) -> Result<DistGraphCommunicator<'env>> {
        const OP: &str = "dist_graph_create_adjacent";
        let indegree = count_of::<i32>(sources.len(), OP)?;
        let outdegree = count_of::<i32>(destinations.len(), OP)?;
        let (sw, dw) = (weights.map(|w| w.0), weights.map(|w| w.1));
        let problem = dist_graph_part(
            self,
            &[("source", sources), ("destination", destinations)],
            &[
                ("source weights", sw, sources.len()),
                ("destination weights", dw, destinations.len()),
            ],
        );
        self.agree_on_parts(problem, weights.is_some(), OP)?;
        let (sw, dw) = (weights_ptr(sw), weights_ptr(dw));
        self.dist_graph(OP, |raw| {
            // SAFETY: a valid communicator; neighbour lists of the degrees given and weights
            // of the same lengths (or MPI's markers), all checked; MPI writes the handle.
            unsafe {
                ffi::MPI_Dist_graph_create_adjacent(
                    self.raw,
                    indegree,
                    sources.as_ptr(),
                    sw,
                    outdegree,
                    destinations.as_ptr(),
                    dw,
                    ffi::MPI_INFO_NULL,
                    c_int::from(reorder),
                    raw,
                )
            }
        })
    }

    /// `MPI_Dist_graph_create` (MPI-4.0 §8.5.4): a distributed graph from any edges any
    /// process knows: for each `sources[i]`, the `degrees[i]` next entries of `destinations`
    /// (and, in a weighted graph, of `weights`) are its edges. Each process may give any
    /// edges, none included; MPI gathers them at their ends. Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // Rank 0 gives the whole ring; the others give nothing.
    /// let n = world.size();
    /// let (sources, degrees, destinations): (Vec<i32>, Vec<i32>, Vec<i32>) = if world.rank() == 0 {
    ///     ((0..n).collect(), vec![1; n as usize], (0..n).map(|k| (k + 1) % n).collect())
    /// } else {
    ///     (vec![], vec![], vec![])
    /// };
    /// let ring = world.dist_graph_create(&sources, &degrees, &destinations, None, false)?;
    /// assert_eq!(ring.destinations(), &[(ring.rank() + 1) % n]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`dist_graph_create_adjacent`](Self::dist_graph_create_adjacent), and
    /// [`ErrorKind::InvalidArgument`] if `degrees` is not one per source, a degree is
    /// negative or the degrees do not add up to `destinations.len()`.
    pub fn dist_graph_create(
        &self,
        sources: &[i32],
        degrees: &[i32],
        destinations: &[i32],
        weights: Option<&[i32]>,
        reorder: bool,
    ) -> Result<DistGraphCommunicator<'env>> {
        const OP: &str = "dist_graph_create";
        let n = count_of::<i32>(sources.len(), OP)?;
        count_of::<i32>(destinations.len(), OP)?;
        let edges = degrees
            .iter()
            .try_fold(0usize, |sum, &d| sum.checked_add(usize::try_from(d).ok()?));
        let problem = if degrees.len() != sources.len() {
            Some(format!(
                "{} degrees for {} sources",
                degrees.len(),
                sources.len()
            ))
        } else if edges != Some(destinations.len()) {
            Some(format!(
                "the degrees {degrees:?} are not {} edges of non-negative degrees",
                destinations.len()
            ))
        } else {
            dist_graph_part(
                self,
                &[("source", sources), ("destination", destinations)],
                &[("weights", weights, destinations.len())],
            )
        };
        self.agree_on_parts(problem, weights.is_some(), OP)?;
        let w = weights_ptr(weights);
        self.dist_graph(OP, |raw| {
            // SAFETY: a valid communicator; `n` sources and degrees, as many destinations (and
            // weights, or MPI's markers) as the degrees add up to, all checked; MPI writes the
            // handle.
            unsafe {
                ffi::MPI_Dist_graph_create(
                    self.raw,
                    n,
                    sources.as_ptr(),
                    degrees.as_ptr(),
                    destinations.as_ptr(),
                    w,
                    ffi::MPI_INFO_NULL,
                    c_int::from(reorder),
                    raw,
                )
            }
        })
    }
}
