//! Cartesian topologies: every answer against what the same MPI gives C (`ffi`) for the same
//! communicator (dims_create, coords, ranks, shifts, sub-grids, cart_map, topo_test); a halo
//! exchange along a periodic and a non-periodic dimension; grids smaller than the
//! communicator, reordered ones; bad input refused before MPI on every rank.

use crate::checks::Checks;
use ferrompi::{
    CartCommunicator, Destination, ErrorKind, Mpi, PROC_NULL, Source, VirtualTopology, ffi,
};
use std::ffi::c_int;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let size = world.size();
    dims_as_c(mpi, t);

    // A 2-D grid of every process, periodic in x only, in rank order.
    let dims = t.okay(mpi.dims_create(size, &[0, 0]), "dims_create 2-D");
    t.eq(
        dims.iter().product::<i32>(),
        size,
        "the 2-D grid holds every process",
    );
    let grid = t.okay(
        world.cart_create(&dims, &[true, false], false),
        "cart_create",
    );
    let grid = grid.expect("a grid of every process leaves none out");
    t.eq(grid.dims(), &dims[..], "dims");
    t.eq(grid.periods(), &[true, false][..], "periods");
    t.eq(grid.rank(), world.rank(), "no reordering keeps the rank");
    t.eq(
        grid.coords(),
        &[world.rank() / dims[1], world.rank() % dims[1]][..],
        "row-major coordinates",
    );
    as_c(&grid, t);
    t.eq_ok(
        grid.topo_test(),
        Some(VirtualTopology::Cartesian),
        "topo_test",
    );
    t.eq_ok(world.topo_test(), None, "the world carries no topology");
    t.eq(
        topo_of(world.as_raw()),
        c_undefined(),
        "C agrees on the world",
    );
    halo(&grid, t);

    // A 3-D grid and its sub-grids.
    let dims3 = t.okay(mpi.dims_create(size, &[0, 0, 0]), "dims_create 3-D");
    let cube = t.okay(
        world.cart_create(&dims3, &[false, true, false], false),
        "3-D",
    );
    let cube = cube.expect("every process");
    as_c(&cube, t);
    let plane = t.okay(cube.cart_sub(&[true, false, true]), "cart_sub x-z");
    t.eq(
        plane.dims(),
        &[dims3[0], dims3[2]][..],
        "the x-z plane's dims",
    );
    t.eq(
        plane.periods(),
        &[false, false][..],
        "the plane keeps its dims' periods",
    );
    t.eq(plane.size(), dims3[0] * dims3[2], "the plane's size");
    t.eq(
        plane.coords(),
        &[cube.coords()[0], cube.coords()[2]][..],
        "the plane's coordinates",
    );
    as_c(&plane, t);
    let line = t.okay(cube.cart_sub(&[false, true, false]), "cart_sub y");
    t.eq(line.periods(), &[true][..], "the y line is periodic");
    as_c(&line, t);
    let point = t.okay(
        cube.cart_sub(&[false, false, false]),
        "cart_sub of no dimension",
    );
    t.eq(point.size(), 1, "no dimension kept: one process each");
    t.eq(point.ndims(), 0, "and no dimension");

    // A grid of no dimension holds one process, as C's.
    let zero = t.okay(world.cart_create(&[], &[], false), "a grid of no dimension");
    t.eq(
        zero.is_some(),
        world.rank() == 0,
        "only rank 0 is in a grid of no dimension",
    );
    if let Some(zero) = &zero {
        t.eq(zero.ndims(), 0, "no dimension");
        t.eq_ok(
            zero.topo_test(),
            Some(VirtualTopology::Cartesian),
            "still Cartesian",
        );
    }

    // A grid smaller than the communicator: the first process only.
    let one = t.okay(world.cart_create(&[1], &[false], false), "a grid of one");
    t.eq(
        one.is_some(),
        world.rank() == 0,
        "only rank 0 is in a grid of one",
    );
    let mapped = t.okay(world.cart_map(&[1], &[false]), "cart_map of one");
    t.eq(mapped, c_map(world.as_raw(), &[1], &[0]), "cart_map as C");
    let mapped = t.okay(world.cart_map(&dims, &[true, false]), "cart_map 2-D");
    t.eq(
        mapped,
        c_map(world.as_raw(), &dims, &[1, 0]),
        "cart_map 2-D as C",
    );

    // Reordered: whatever MPI chooses, the grid is consistent.
    let reordered = t.okay(world.cart_create(&dims, &[true, true], true), "reordered");
    let reordered = reordered.expect("every process");
    t.eq_ok(
        reordered.rank_of(reordered.coords()),
        reordered.rank(),
        "a reordered grid's rank of its coordinates",
    );
    as_c(&reordered, t);

    bad_input(mpi, &grid, t);
    t.okay(world.barrier(), "the world works after the refusals");
}

/// `dims_create` against `MPI_Dims_create` for every count up to 24, with and without fixed
/// dimensions.
fn dims_as_c(mpi: &Mpi, t: &mut Checks) {
    for nnodes in 1..=24 {
        for given in [&[0, 0][..], &[0, 0, 0], &[0], &[2, 0], &[0, 0, 2]] {
            let fixed: i32 = given.iter().filter(|&&d| d > 0).product();
            if nnodes % fixed != 0 {
                continue;
            }
            let mut c = given.to_vec();
            // SAFETY: `c` holds `given.len()` ints, which MPI reads and overwrites.
            let rc = unsafe { ffi::MPI_Dims_create(nnodes, c.len() as c_int, c.as_mut_ptr()) };
            t.eq(rc, 0, "MPI_Dims_create");
            t.eq_ok(
                mpi.dims_create(nnodes, given),
                c,
                format!("dims_create({nnodes}, {given:?})"),
            );
        }
    }
}

/// Every query of `grid` against the same query in C.
fn as_c(grid: &CartCommunicator<'_>, t: &mut Checks) {
    let raw = grid.as_raw();
    let n = grid.ndims();
    let (mut dims, mut periods, mut coords) = (vec![0; n], vec![0; n], vec![0; n]);
    let mut ndims: c_int = -1;
    // SAFETY: a Cartesian communicator; MPI writes one int, then three arrays of `n` ints.
    unsafe {
        t.eq(ffi::MPI_Cartdim_get(raw, &mut ndims), 0, "MPI_Cartdim_get");
        let rc = ffi::MPI_Cart_get(
            raw,
            ndims,
            dims.as_mut_ptr(),
            periods.as_mut_ptr(),
            coords.as_mut_ptr(),
        );
        t.eq(rc, 0, "MPI_Cart_get");
    }
    t.eq(ndims as usize, n, "ndims as C");
    t.eq(grid.dims(), &dims[..], "dims as C");
    let periods: Vec<bool> = periods.iter().map(|&p| p != 0).collect();
    t.eq(grid.periods(), &periods[..], "periods as C");
    t.eq(grid.coords(), &coords[..], "coords as C");
    t.eq(topo_of(raw), c_cart(), "MPI_Topo_test says Cartesian");
    for rank in 0..grid.size() {
        let mut c = vec![0; n];
        // SAFETY: a rank of the communicator, and `n` ints to fill.
        let rc = unsafe { ffi::MPI_Cart_coords(raw, rank, n as c_int, c.as_mut_ptr()) };
        t.eq(rc, 0, "MPI_Cart_coords");
        t.eq_ok(grid.coords_of(rank), c.clone(), format!("coords of {rank}"));
        t.eq_ok(grid.rank_of(&c), rank, format!("rank of {c:?}"));
    }
    for dim in 0..n {
        for disp in [-2, -1, 0, 1, 3] {
            let (mut source, mut dest) = (0, 0);
            // SAFETY: a dimension of the grid; MPI writes two ints.
            let rc =
                unsafe { ffi::MPI_Cart_shift(raw, dim as c_int, disp, &mut source, &mut dest) };
            t.eq(rc, 0, "MPI_Cart_shift");
            let null = ferrompi::ProcNull::RANK;
            let want = ferrompi::Shift {
                source: if source == null {
                    Source::ProcNull
                } else {
                    Source::Rank(source)
                },
                destination: if dest == null {
                    Destination::ProcNull
                } else {
                    Destination::Rank(dest)
                },
            };
            t.eq_ok(grid.shift(dim, disp), want, format!("shift({dim}, {disp})"));
        }
    }
    // Periodic dimensions wrap any coordinate, as C's MPI_Cart_rank does.
    if n > 0 && grid.periods().iter().all(|&p| p) {
        let far: Vec<i32> = grid
            .coords()
            .iter()
            .zip(grid.dims())
            .map(|(c, d)| c + 3 * d)
            .collect();
        t.eq_ok(grid.rank_of(&far), grid.rank(), "periodic coordinates wrap");
        let behind: Vec<i32> = grid
            .coords()
            .iter()
            .zip(grid.dims())
            .map(|(c, d)| c - d)
            .collect();
        t.eq_ok(
            grid.rank_of(&behind),
            grid.rank(),
            "negative periodic coordinates wrap",
        );
    }
}

/// One step of a halo exchange: each process sends its rank east and north and receives from
/// west and south; north past the top edge is nobody (the dimension is not periodic), and the
/// bottom row receives nothing from the south.
fn halo(grid: &CartCommunicator<'_>, t: &mut Checks) {
    let (dims, coords) = (grid.dims(), grid.coords());
    let east = t.okay(grid.shift(0, 1), "shift x");
    let mut from_west = [-1i32];
    t.okay(
        grid.sendrecv(
            &[grid.rank()],
            east.destination,
            3,
            &mut from_west,
            east.source,
            3,
        ),
        "exchange along x",
    );
    let west = [(coords[0] + dims[0] - 1) % dims[0], coords[1]];
    t.eq_ok(
        grid.rank_of(&west),
        from_west[0],
        "the west neighbour's rank arrived",
    );
    let north = t.okay(grid.shift(1, 1), "shift y");
    t.eq(
        north.destination == PROC_NULL.into(),
        coords[1] == dims[1] - 1,
        "nobody north of the top row",
    );
    let mut from_south = [-1i32];
    t.okay(
        grid.sendrecv(
            &[grid.rank()],
            north.destination,
            4,
            &mut from_south,
            north.source,
            4,
        ),
        "exchange along y",
    );
    let want = if coords[1] == 0 {
        -1 // nothing arrives from beyond the bottom edge
    } else {
        t.okay(grid.rank_of(&[coords[0], coords[1] - 1]), "south")
    };
    t.eq(
        from_south[0],
        want,
        "the south neighbour's rank, or nothing at the edge",
    );
}

/// Bad input: an error before MPI is called, on every rank alike.
fn bad_input(mpi: &Mpi, grid: &CartCommunicator<'_>, t: &mut Checks) {
    let world = mpi.world();
    let size = world.size();
    let invalid = |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    t.err(
        world.cart_create(&[size], &[true, false], false),
        invalid,
        "periods too long",
    );
    t.err(
        world.cart_create(&[size, 0], &[true, false], false),
        invalid,
        "a dimension of 0",
    );
    t.err(
        world.cart_create(&[-size], &[true], false),
        invalid,
        "a negative dimension",
    );
    t.err(
        world.cart_create(&[size + 1], &[true], false),
        invalid,
        "a grid too large",
    );
    t.err(
        world.cart_create(&[i32::MAX, 2], &[true, true], false),
        invalid,
        "overflowing",
    );
    t.err(
        world.cart_map(&[size + 1], &[false]),
        invalid,
        "cart_map too large",
    );
    t.err(
        mpi.dims_create(0, &[0]),
        invalid,
        "dims_create of no process",
    );
    t.err(
        mpi.dims_create(6, &[-1, 0]),
        invalid,
        "dims_create with a negative",
    );
    t.err(
        mpi.dims_create(6, &[4, 0]),
        invalid,
        "dims_create not dividing",
    );
    t.err(
        mpi.dims_create(6, &[2, 2]),
        invalid,
        "dims_create all given, wrong product",
    );
    t.err(
        grid.rank_of(&[0]),
        invalid,
        "rank_of with too few coordinates",
    );
    t.err(
        grid.rank_of(&[0, grid.dims()[1]]),
        invalid,
        "rank_of past a non-periodic edge",
    );
    t.err(
        grid.rank_of(&[0, -1]),
        invalid,
        "rank_of before a non-periodic edge",
    );
    t.err(
        grid.shift(2, 1),
        invalid,
        "shift along a dimension the grid lacks",
    );
    t.err(
        grid.cart_sub(&[true]),
        invalid,
        "cart_sub with too few flags",
    );
    t.err(
        grid.coords_of(size),
        |e| matches!(e.kind(), ErrorKind::InvalidRank { .. }),
        "coords_of a rank outside",
    );
}

/// `MPI_Topo_test` in C.
fn topo_of(comm: ffi::MPI_Comm) -> c_int {
    let mut kind: c_int = -1;
    // SAFETY: a valid communicator; MPI writes one int.
    let rc = unsafe { ffi::MPI_Topo_test(comm, &mut kind) };
    assert_eq!(rc, 0, "MPI_Topo_test");
    kind
}

/// What `MPI_Topo_test` says of a Cartesian communicator: the one a grid made in C carries.
fn c_cart() -> c_int {
    let mut raw = ffi::MPI_COMM_NULL;
    // SAFETY: MPI_COMM_SELF, one dimension of one process; MPI writes the new handle.
    let rc = unsafe {
        ffi::MPI_Cart_create(
            ffi::MPI_COMM_SELF,
            1,
            [1].as_ptr(),
            [0].as_ptr(),
            0,
            &mut raw,
        )
    };
    assert_eq!(rc, 0, "MPI_Cart_create");
    let kind = topo_of(raw);
    // SAFETY: the communicator made above, freed once.
    unsafe { ffi::MPI_Comm_free(&mut raw) };
    kind
}

/// `MPI_UNDEFINED` as an int.
fn c_undefined() -> c_int {
    ffi::MPI_UNDEFINED as c_int
}

/// `MPI_Cart_map` in C: the rank, or `None` for `MPI_UNDEFINED`.
fn c_map(comm: ffi::MPI_Comm, dims: &[i32], periods: &[c_int]) -> Option<i32> {
    let mut rank: c_int = -1;
    // SAFETY: a valid communicator and `dims.len()` dims and periods; MPI writes one int.
    let rc = unsafe {
        ffi::MPI_Cart_map(
            comm,
            dims.len() as c_int,
            dims.as_ptr(),
            periods.as_ptr(),
            &mut rank,
        )
    };
    assert_eq!(rc, 0, "MPI_Cart_map");
    (rank != c_undefined()).then_some(rank)
}
