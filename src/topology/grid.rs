//! A Cartesian grid laid out over the nodes: [`Hierarchy::cart_create`].
//!
//! `MPI_Cart_create`'s `reorder` lets an MPI renumber the processes to fit the machine, but
//! the MPIs ferrompi is tested on (Open MPI 4.1 and 5.0, MPICH 4.0 and 5.0) kept every
//! process's rank with `reorder = true` (1-, 2- and 3-D grids on one node; Open MPI 4.1 also
//! a 2-D grid over four fake hosts of two processes each). A grid filled in
//! rank order, with ranks numbered node by node as launchers do by default, gives each node a
//! slab of the grid — thinner as nodes are added — and a stencil then sends most of its faces
//! between nodes. This lays the grid out itself: the nodes on a grid of their own, each node's
//! processes on a box of the same number of dimensions, and each process at its node's box's
//! offset plus its place in the box, so that a node's processes hold one compact box of the
//! grid and only the box's faces cross the network.

use super::Hierarchy;
use crate::comm::cart::{CartCommunicator, dims_create};
use crate::comm::{Communicator, invalid_argument, unexpected_null};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Error, Result};

const OP: &str = "hierarchy_cart_create";

fn invalid(reason: String) -> Error {
    invalid_argument(OP, reason)
}

/// `index`'s coordinates in a row-major grid of `dims` (the last dimension fastest).
fn coords_of(mut index: usize, dims: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; dims.len()];
    for (c, &d) in coords.iter_mut().zip(dims).rev() {
        *c = index % d;
        index /= d;
    }
    coords
}

/// The row-major index of `coords` in a grid of `dims`.
fn index_of(coords: &[usize], dims: &[usize]) -> usize {
    coords
        .iter()
        .zip(dims)
        .fold(0, |index, (&c, &d)| index * d + c)
}

/// The node-aware layout of `nodes` nodes of `per_node` processes each on `ndims` dimensions:
/// the grid's dimensions, and the rank (row-major, in the grid) of local process `local` of
/// node `node`.
fn layout(
    nodes: usize,
    per_node: usize,
    ndims: usize,
    node: usize,
    local: usize,
) -> Result<(Vec<i32>, usize)> {
    let count = |n: usize| {
        i32::try_from(n).map_err(|_| invalid(format!("{n} processes do not fit an int")))
    };
    let free = vec![0; ndims];
    // `dims_create` returns positive dimensions.
    let as_len = |d: Vec<i32>| d.iter().map(|&v| v as usize).collect::<Vec<_>>();
    let node_dims = as_len(dims_create(count(nodes)?, &free)?);
    let box_dims = as_len(dims_create(count(per_node)?, &free)?);
    let (dims, rank) = place(&node_dims, &box_dims, node, local);
    let dims = dims.into_iter().map(count).collect::<Result<_>>()?;
    Ok((dims, rank))
}

/// Nodes on a grid of `node_dims`, each node's processes on a box of `box_dims`: the grid's
/// dimensions, and the row-major rank in it of local process `local` of node `node`.
fn place(
    node_dims: &[usize],
    box_dims: &[usize],
    node: usize,
    local: usize,
) -> (Vec<usize>, usize) {
    let dims: Vec<usize> = node_dims.iter().zip(box_dims).map(|(n, b)| n * b).collect();
    let (at, within) = (coords_of(node, node_dims), coords_of(local, box_dims));
    let coords: Vec<usize> = (at.iter().zip(&within).zip(box_dims))
        .map(|((&a, &w), &b)| a * b + w)
        .collect();
    let rank = index_of(&coords, &dims);
    (dims, rank)
}

impl<'env> Hierarchy<'env> {
    /// A Cartesian grid of `ndims` dimensions of every process of `comm` (the communicator
    /// this hierarchy was made from), laid out over the nodes (see the [module docs](self)):
    /// the nodes on a grid of `ndims` dimensions balanced by `dims_create`, each node's
    /// processes on a box likewise, the grid their product. Periodic where `periods` says.
    /// Collective. Where the nodes hold unequal numbers of processes, no box fits them all:
    /// the grid is then `cart_create`'s, in rank order, with `reorder`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let h = world.hierarchy()?;
    /// let grid = h.cart_create(&world, 2, &[false, false])?;
    /// assert_eq!(grid.dims().iter().product::<i32>(), world.size());
    /// assert_eq!(grid.rank_of(grid.coords())?, grid.rank());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a communicator other than the hierarchy's (another
    /// size or rank), or `periods` of another length than `ndims`; as
    /// [`Communicator::cart_create`].
    pub fn cart_create(
        &self,
        comm: &Communicator<'env>,
        ndims: usize,
        periods: &[bool],
    ) -> Result<CartCommunicator<'env>> {
        if comm.size() as usize != self.ranks.len() || comm.rank() != self.rank {
            return Err(invalid(format!(
                "rank {} of {} is not the rank {} of {} this hierarchy was made from",
                comm.rank(),
                comm.size(),
                self.rank,
                self.ranks.len()
            )));
        }
        if periods.len() != ndims {
            return Err(invalid(format!(
                "{} periods for {ndims} dimensions",
                periods.len()
            )));
        }
        let per_node = self.ranks_per_node();
        let uniform = per_node.windows(2).all(|w| w[0] == w[1]);
        let made = if uniform && !per_node.is_empty() {
            let (dims, key) = layout(
                per_node.len(),
                per_node[0],
                ndims,
                self.node_index(),
                self.node.rank() as usize,
            )?;
            let key = i32::try_from(key).map_err(|_| invalid(format!("rank {key}")))?;
            let ordered = comm.split(Some(0), key)?;
            let ordered = ordered.ok_or_else(|| unexpected_null(OP))?;
            ordered.cart_create(&dims, periods, false)?
        } else {
            let dims = dims_create(comm.size(), &vec![0; ndims])?;
            comm.cart_create(&dims, periods, true)?
        };
        // A grid of every process leaves none out.
        made.ok_or_else(|| unexpected_null(OP))
    }
}

#[cfg(test)]
mod tests {
    use super::{coords_of, index_of, place};

    #[test]
    fn row_major_coordinates_round_trip() {
        let dims = [3, 4, 2];
        for index in 0..24 {
            let coords = coords_of(index, &dims);
            assert!(coords.iter().zip(&dims).all(|(c, d)| c < d));
            assert_eq!(index_of(&coords, &dims), index);
        }
        assert_eq!(coords_of(5, &[2, 3]), [1, 2]);
    }

    /// 4 nodes of 4 processes on a 4 x 4 grid: each node a 2 x 2 box (rank order would give
    /// each node a row), every place taken once.
    #[test]
    fn each_node_holds_a_box() {
        let (node_dims, box_dims) = ([2, 2], [2, 2]);
        let mut taken = [false; 16];
        for node in 0..4 {
            let places: Vec<Vec<usize>> = (0..4)
                .map(|local| {
                    let (dims, rank) = place(&node_dims, &box_dims, node, local);
                    assert_eq!(dims, [4, 4]);
                    assert!(
                        !std::mem::replace(&mut taken[rank], true),
                        "rank {rank} twice"
                    );
                    coords_of(rank, &dims)
                })
                .collect();
            for d in 0..2 {
                let lo = places.iter().map(|c| c[d]).min().unwrap();
                let hi = places.iter().map(|c| c[d]).max().unwrap();
                assert_eq!((hi - lo + 1, lo % 2), (2, 0), "node {node}, dimension {d}");
            }
        }
        assert!(taken.iter().all(|&t| t));
    }
}
