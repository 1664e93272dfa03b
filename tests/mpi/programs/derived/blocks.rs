//! The `v` collectives on layouts: column tiles of variable width gathered into a global
//! grid (interleaved in memory), scattered back, gathered by every rank, a transpose by
//! `alltoallv_view`, each blocking and nonblocking; blocks that share a byte or reach past
//! their slice refused when they are made, and a block count other than the ranks' refused
//! before MPI runs.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{DerivedType, Equivalence, Error, Mpi, Order};

/// Rank `r`'s tile: `ROWS` rows of `r + 1` columns, starting at column `r * (r + 1) / 2` of
/// the global grid.
const ROWS: usize = 3;

/// The value at row `i`, column `c` of rank `r`'s tile.
fn value(r: usize, i: usize, c: usize) -> i32 {
    (r * 10_000 + i * 100 + c) as i32
}

/// The overlap check reads each constructor's type map exactly: every type below selects
/// elements 0 and 2 of an `f64` buffer (a hole at 1), resized so that displacements count
/// elements. Two blocks one element apart interleave without sharing a byte (accepted); two
/// elements apart they share element 2 (refused).
pub(super) fn footprints(mpi: &Mpi, t: &mut Checks) {
    let f = f64::datatype();
    let vector = t.okay(DerivedType::vector(mpi, 2, 1, 2, f), "vector");
    let made: Vec<(&str, ferrompi::Result<DerivedType<'_>>)> = vec![
        ("vector", DerivedType::vector(mpi, 2, 1, 2, f)),
        ("hvector", DerivedType::hvector(mpi, 2, 1, 16, f)),
        ("indexed", DerivedType::indexed(mpi, &[1, 1], &[0, 2], f)),
        ("hindexed", DerivedType::hindexed(mpi, &[1, 1], &[0, 16], f)),
        (
            "indexed_block",
            DerivedType::indexed_block(mpi, 1, &[0, 2], f),
        ),
        (
            "hindexed_block",
            DerivedType::hindexed_block(mpi, 1, &[0, 16], f),
        ),
        (
            "struct",
            DerivedType::create_struct(mpi, &[1, 1], &[0, 16], &[f.into(), f.into()]),
        ),
        (
            "subarray (C order)",
            DerivedType::subarray(mpi, &[2, 2], &[2, 1], &[0, 0], Order::C, f),
        ),
        (
            "subarray (Fortran order)",
            DerivedType::subarray(mpi, &[2, 2], &[1, 2], &[0, 0], Order::Fortran, f),
        ),
        (
            "contiguous of a vector",
            DerivedType::contiguous(mpi, 1, &vector),
        ),
        ("dup of a vector", vector.dup()),
    ];
    for (name, ty) in made {
        let ty = t.okay(ty, name);
        let one = t.okay(
            DerivedType::resized(mpi, &ty, 0, 8),
            format!("{name}, resized"),
        );
        let mut buf = [0.0f64; 8];
        t.okay(
            one.blocks_mut(&mut buf, &[1, 1], &[0, 1]).map(drop),
            format!("{name}: elements 0, 2 and 1, 3 interleave, accepted"),
        );
        t.err(
            one.blocks_mut(&mut buf, &[1, 1], &[0, 2]).map(drop),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            format!("{name}: elements 0, 2 and 2, 4 share element 2, refused"),
        );
    }
}

pub(super) fn v_collectives(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    let widths: Vec<usize> = (1..=size).collect();
    let starts: Vec<usize> = (0..size).map(|r| r * (r + 1) / 2).collect();
    let width: usize = widths.iter().sum();
    // The global grid is ROWS x width, row-major: a column of it is a vector of ROWS values
    // `width` apart, resized so that column c starts c values in.
    let column = t.okay(
        DerivedType::vector(mpi, ROWS, 1, width as isize, i32::datatype()),
        "a column of the grid",
    );
    let columns = t.okay(DerivedType::resized(mpi, &column, 0, 4), "columns");
    // My tile is ROWS x (me + 1), row-major; sent column by column, to match the grid's.
    let local = t.okay(
        DerivedType::vector(mpi, ROWS, 1, (me + 1) as isize, i32::datatype()),
        "a column of my tile",
    );
    let locals = t.okay(DerivedType::resized(mpi, &local, 0, 4), "my tile's columns");
    let tile: Vec<i32> = (0..ROWS * (me + 1))
        .map(|k| value(me, k / (me + 1), k % (me + 1)))
        .collect();
    let want: Vec<i32> = (0..ROWS * width)
        .map(|k| {
            let (i, c) = (k / width, k % width);
            let r = (0..size).rfind(|&r| starts[r] <= c).unwrap_or(0);
            value(r, i, c - starts[r])
        })
        .collect();

    for nonblocking in [false, true] {
        let how = if nonblocking {
            "nonblocking"
        } else {
            "blocking"
        };
        // Gathered at the last rank: its blocks interleave row by row.
        let root = world.size() - 1;
        let mut grid = vec![-1i32; ROWS * width];
        let mut blocks = t.okay(
            columns.blocks_mut(&mut grid, &widths, &starts),
            "the grid's column tiles",
        );
        let send = t.okay(locals.view(&tile, me + 1), "my tile, column by column");
        let at_root = (world.rank() == root).then_some(&mut blocks);
        let gathered = if nonblocking {
            ferrompi::scope(|s| {
                world
                    .igatherv_view(s, send, at_root, root)?
                    .wait()
                    .map(drop)
            })
        } else {
            world.gatherv_view(send, at_root, root)
        };
        t.okay(gathered, format!("gatherv_view of column tiles ({how})"));
        drop(blocks);
        if world.rank() == root {
            t.eq(
                &grid,
                &want,
                format!("gatherv_view: the grid at the root ({how})"),
            );
        }

        // Scattered back from the root's grid: each rank's tile again.
        let mut back = vec![-1i32; ROWS * (me + 1)];
        let grid_blocks = t.okay(columns.blocks(&grid, &widths, &starts), "send blocks");
        let at_root = (world.rank() == root).then_some(&grid_blocks);
        let into = t.okay(locals.view_mut(&mut back, me + 1), "my tile to fill");
        let scattered = if nonblocking {
            ferrompi::scope(|s| {
                world
                    .iscatterv_view(s, at_root, into, root)?
                    .wait()
                    .map(drop)
            })
        } else {
            world.scatterv_view(at_root, into, root)
        };
        t.okay(scattered, format!("scatterv_view of column tiles ({how})"));
        t.eq(&back, &tile, format!("scatterv_view: my tile back ({how})"));

        // Every rank gathers the whole grid.
        let mut everywhere = vec![-1i32; ROWS * width];
        let mut all = t.okay(
            columns.blocks_mut(&mut everywhere, &widths, &starts),
            "the grid's tiles, everywhere",
        );
        let send = t.okay(locals.view(&tile, me + 1), "my tile");
        let gathered = if nonblocking {
            ferrompi::scope(|s| world.iallgatherv_view(s, send, &mut all)?.wait().map(drop))
        } else {
            world.allgatherv_view(send, &mut all)
        };
        t.okay(gathered, format!("allgatherv_view ({how})"));
        drop(all);
        t.eq(
            &everywhere,
            &want,
            format!("allgatherv_view: the grid on every rank ({how})"),
        );

        // A transpose: column j of my size x size matrix goes to rank j, and arrives as row
        // `me` of its matrix.
        let n = size;
        let matrix: Vec<i32> = (0..n * n).map(|k| (me * 1000 + k) as i32).collect();
        let ncol = t.okay(
            DerivedType::vector(mpi, n, 1, n as isize, i32::datatype()),
            "a column",
        );
        let ncols = t.okay(DerivedType::resized(mpi, &ncol, 0, 4), "columns");
        let row = t.okay(DerivedType::contiguous(mpi, n, i32::datatype()), "a row");
        let mut rows = vec![-1i32; n * n];
        let ones = vec![1usize; n];
        let each: Vec<usize> = (0..n).collect();
        let send = t.okay(ncols.blocks(&matrix, &ones, &each), "columns to send");
        let mut recv = t.okay(row.blocks_mut(&mut rows, &ones, &each), "rows to fill");
        let moved = if nonblocking {
            ferrompi::scope(|s| world.ialltoallv_view(s, &send, &mut recv)?.wait().map(drop))
        } else {
            world.alltoallv_view(&send, &mut recv)
        };
        t.okay(moved, format!("alltoallv_view, a transpose ({how})"));
        drop(recv);
        let transposed: Vec<i32> = (0..n * n)
            .map(|k| {
                let (q, i) = (k / n, k % n);
                (q * 1000 + i * n + me) as i32
            })
            .collect();
        t.eq(
            &rows,
            &transposed,
            format!("alltoallv_view: row q is column {me} of rank q's matrix ({how})"),
        );
    }

    // Refused when made: two tiles sharing a column, a block past the end, counts and
    // displacements of different lengths.
    let mut grid = vec![0i32; ROWS * width];
    let invalid = |e: &Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    let overlap = columns.blocks_mut(&mut grid, &[2, 2], &[0, 1]);
    t.err(
        overlap.map(drop),
        invalid,
        "blocks sharing a column refused",
    );
    let past = columns.blocks_mut(&mut grid, &[1], &[width]);
    t.err(
        past.map(drop),
        invalid,
        "a block past the grid's end refused",
    );
    let uneven = columns.blocks(&grid, &[1, 1], &[0]);
    t.err(
        uneven.map(drop),
        invalid,
        "two counts and one displacement refused",
    );
    // Disjoint blocks whose reaches interleave are accepted (every other column each).
    if width >= 2 {
        let odd_even = columns.blocks_mut(&mut grid, &[1, 1], &[0, 1]);
        t.okay(odd_even.map(drop), "interleaved, disjoint blocks accepted");
    }
    // One block too many, on every rank: refused before MPI runs.
    let mut everywhere = vec![0i32; ROWS * width];
    let mut extra = widths.clone();
    extra.push(0);
    let mut extra_starts = starts.clone();
    extra_starts.push(0);
    let mut wrong = t.okay(
        columns.blocks_mut(&mut everywhere, &extra, &extra_starts),
        "one block per rank and one more",
    );
    let send = t.okay(locals.view(&tile, me + 1), "my tile");
    t.err(
        world.allgatherv_view(send, &mut wrong),
        invalid,
        "allgatherv_view without one block per rank refused",
    );
    if size == 1 {
        let send = t.okay(locals.view(&tile, me + 1), "my tile");
        t.err(
            world.gatherv_view::<i32>(send, None, 0),
            invalid,
            "gatherv_view at the root without its blocks refused",
        );
    }
}

/// The persistent `v` collectives on layouts, native and emulated: a rank's column of a
/// `ROWS x size` grid gathered at the last rank, scattered back, gathered by every rank, and a
/// transpose, each started twice with new values between the starts.
pub(super) fn persistent_v(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    let root = world.size() - 1;
    let column = t.okay(
        DerivedType::vector(mpi, ROWS, 1, size as isize, i32::datatype()),
        "a column of the grid",
    );
    let columns = t.okay(DerivedType::resized(mpi, &column, 0, 4), "columns");
    let rows = t.okay(DerivedType::contiguous(mpi, ROWS, i32::datatype()), "a run");
    let ones = vec![1usize; size];
    let each: Vec<usize> = (0..size).collect();
    let mine = |step: usize| -> Vec<i32> { (0..ROWS).map(|i| value(me, i, step)).collect() };
    // The grid a step makes: element (i, r) is rank r's value i.
    let grid = |step: usize| -> Vec<i32> {
        (0..ROWS * size)
            .map(|k| value(k % size, k / size, step))
            .collect()
    };
    let at_root = |t: &mut Checks, buf: Vec<i32>| {
        if world.rank() == root {
            t.okay(
                columns.owned_blocks(buf, &ones, &each),
                "the root's columns",
            )
        } else {
            t.okay(columns.owned_blocks(Vec::new(), &[], &[]), "no blocks here")
        }
    };
    for emulate in [false, true] {
        ferrompi::set_persistent_emulation(emulate);
        let how = if emulate { "emulated" } else { "native" };
        let send = t.okay(rows.owned_view(mine(0), 1), "my run");
        let gather = world.gatherv_init_view(send, at_root(t, vec![-1; ROWS * size]), root);
        let mut gather = t.okay(gather, format!("gatherv_init_view ({how})"));
        for step in 0..2 {
            gather.send_mut().copy_from_slice(&mine(step));
            t.okay(gather.start().and_then(|a| a.wait()), "a gatherv start");
            if world.rank() == root {
                t.eq(
                    gather.recv().to_vec(),
                    grid(step),
                    format!("gatherv_init_view: the grid, start {step} ({how})"),
                );
            }
        }
        drop(gather);

        let into = t.okay(rows.owned_view(vec![-1; ROWS], 1), "my run to fill");
        let scatter = world.scatterv_init_view(at_root(t, grid(0)), into, root);
        let mut scatter = t.okay(scatter, format!("scatterv_init_view ({how})"));
        for step in 0..2 {
            if world.rank() == root {
                scatter.send_mut().copy_from_slice(&grid(step));
            }
            t.okay(scatter.start().and_then(|a| a.wait()), "a scatterv start");
            t.eq(
                scatter.recv().to_vec(),
                mine(step),
                format!("scatterv_init_view: my run, start {step} ({how})"),
            );
        }
        drop(scatter);

        let send = t.okay(rows.owned_view(mine(0), 1), "my run");
        let everywhere = t.okay(
            columns.owned_blocks(vec![-1; ROWS * size], &ones, &each),
            "every rank's columns",
        );
        let all = world.allgatherv_init_view(send, everywhere);
        let mut all = t.okay(all, format!("allgatherv_init_view ({how})"));
        for step in 0..2 {
            all.send_mut().copy_from_slice(&mine(step));
            t.okay(all.start().and_then(|a| a.wait()), "an allgatherv start");
            t.eq(
                all.recv().to_vec(),
                grid(step),
                format!("allgatherv_init_view: the grid, start {step} ({how})"),
            );
        }
        drop(all);

        // A transpose of size x size matrices, started twice.
        let n = size;
        let ncol = t.okay(
            DerivedType::vector(mpi, n, 1, n as isize, i32::datatype()),
            "a column",
        );
        let ncols = t.okay(DerivedType::resized(mpi, &ncol, 0, 4), "columns");
        let row = t.okay(DerivedType::contiguous(mpi, n, i32::datatype()), "a row");
        let matrix = |step: usize| -> Vec<i32> {
            (0..n * n)
                .map(|k| (step * 100_000 + me * 1000 + k) as i32)
                .collect()
        };
        let send = t.okay(ncols.owned_blocks(matrix(0), &ones, &each), "columns");
        let recv = t.okay(row.owned_blocks(vec![-1; n * n], &ones, &each), "rows");
        let transpose = world.alltoallv_init_view(send, recv);
        let mut transpose = t.okay(transpose, format!("alltoallv_init_view ({how})"));
        for step in 0..2 {
            transpose.send_mut().copy_from_slice(&matrix(step));
            t.okay(
                transpose.start().and_then(|a| a.wait()),
                "an alltoallv start",
            );
            let want: Vec<i32> = (0..n * n)
                .map(|k| (step * 100_000 + (k / n) * 1000 + (k % n) * n + me) as i32)
                .collect();
            t.eq(
                transpose.recv().to_vec(),
                want,
                format!("alltoallv_init_view: the transpose, start {step} ({how})"),
            );
        }
    }
    ferrompi::set_persistent_emulation(false);

    // Receive blocks sharing a byte are refused when the request is made.
    if size >= 2 {
        let send = t.okay(rows.owned_view(mine(0), 1), "my run");
        let overlapping = t.okay(
            columns.owned_blocks(
                vec![0; ROWS * size],
                &[vec![1usize; size - 1], vec![2]].concat(),
                &[(0..size - 1).collect::<Vec<_>>(), vec![size - 2]].concat(),
            ),
            "the last block over the one before",
        );
        t.err(
            world.allgatherv_init_view(send, overlapping).map(drop),
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "allgatherv_init_view of receive blocks sharing a column refused",
        );
    }
}

/// `alltoallw_view`: row `j` of each rank's matrix goes to rank `j`, arriving as column `i`
/// for sender `i`, the columns alternately a vector and an indexed type (interleaved, each its
/// own type), blocking and nonblocking; receive blocks sharing a byte refused when made.
pub(super) fn alltoallw(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    use ferrompi::{LayoutBlocks, LayoutBlocksMut, OwnedLayoutBlocks};
    let (me, n) = (world.rank() as usize, world.size() as usize);
    let row = t.okay(DerivedType::contiguous(mpi, n, i32::datatype()), "a row");
    let vector = t.okay(
        DerivedType::vector(mpi, n, 1, n as isize, i32::datatype()),
        "a column as a vector",
    );
    let starts: Vec<isize> = (0..n).map(|k| (k * n) as isize).collect();
    let indexed = t.okay(
        DerivedType::indexed(mpi, &vec![1; n], &starts, i32::datatype()),
        "a column as an indexed type",
    );
    let matrix: Vec<i32> = (0..n * n).map(|k| (me * 100 + k) as i32).collect();
    let want: Vec<i32> = (0..n * n)
        .map(|k| {
            let (r, i) = (k / n, k % n); // element (r, i): row r of column i
            (i * 100 + me * n + r) as i32
        })
        .collect();
    for nonblocking in [false, true] {
        let how = if nonblocking {
            "nonblocking"
        } else {
            "blocking"
        };
        let send: Vec<_> = (0..n).map(|j| (&row, 1, 4 * n * j)).collect();
        let send = t.okay(LayoutBlocks::new(&matrix, &send), "rows to send");
        let mut got = vec![-1i32; n * n];
        let recv: Vec<_> = (0..n)
            .map(|i| (if i % 2 == 0 { &vector } else { &indexed }, 1, 4 * i))
            .collect();
        let mut recv = t.okay(
            LayoutBlocksMut::new(&mut got, &recv),
            "interleaved columns of two types",
        );
        let moved = if nonblocking {
            ferrompi::scope(|s| world.ialltoallw_view(s, &send, &mut recv)?.wait().map(drop))
        } else {
            world.alltoallw_view(&send, &mut recv)
        };
        t.okay(moved, format!("alltoallw_view ({how})"));
        drop(recv);
        t.eq(
            &got,
            &want,
            format!("alltoallw_view: column i from rank i ({how})"),
        );
    }
    // Persistent, native and emulated, started twice with new values.
    for emulate in [false, true] {
        ferrompi::set_persistent_emulation(emulate);
        let how = if emulate { "emulated" } else { "native" };
        let send: Vec<_> = (0..n).map(|j| (&row, 1, 4 * n * j)).collect();
        let recv: Vec<_> = (0..n)
            .map(|i| (if i % 2 == 0 { &vector } else { &indexed }, 1, 4 * i))
            .collect();
        let send = t.okay(OwnedLayoutBlocks::new(matrix.clone(), &send), "rows, owned");
        let recv = t.okay(
            OwnedLayoutBlocks::new(vec![-1i32; n * n], &recv),
            "columns, owned",
        );
        let exchange = world.alltoallw_init_view(send, recv);
        let mut exchange = t.okay(exchange, format!("alltoallw_init_view ({how})"));
        for step in 0..2i32 {
            let next: Vec<i32> = matrix.iter().map(|v| v + step * 10_000).collect();
            exchange.send_mut().copy_from_slice(&next);
            t.okay(
                exchange.start().and_then(|a| a.wait()),
                "an alltoallw start",
            );
            let shifted: Vec<i32> = want.iter().map(|v| v + step * 10_000).collect();
            t.eq(
                exchange.recv().to_vec(),
                shifted,
                format!("alltoallw_init_view: column i from rank i, start {step} ({how})"),
            );
        }
    }
    ferrompi::set_persistent_emulation(false);

    let mut got = vec![0i32; n * n];
    let invalid = |e: &Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. });
    let crossing = OwnedLayoutBlocks::new(vec![0i32; n * n], &[(&row, 1, 0), (&vector, 1, 0)]);
    let crossing = t.okay(
        crossing,
        "a row and a column, owned (a send side may overlap)",
    );
    let rows: Vec<_> = (0..2).map(|_| (&row, 0, 0)).collect();
    let rows = t.okay(
        OwnedLayoutBlocks::new(vec![0i32; n * n], &rows),
        "empty rows",
    );
    if n == 2 {
        t.err(
            world.alltoallw_init_view(rows, crossing).map(drop),
            invalid,
            "alltoallw_init_view of receive blocks sharing element 0 refused",
        );
    }
    let crossing = LayoutBlocksMut::new(&mut got, &[(&row, 1, 0), (&vector, 1, 0)]);
    t.err(
        crossing.map(drop),
        invalid,
        "a row and a column sharing element 0 refused",
    );
    let past = LayoutBlocks::new(&matrix, &[(&row, 1, 4 * n * n)]);
    t.err(past.map(drop), invalid, "a row past the matrix refused");
    let send: Vec<_> = (0..=n).map(|_| (&row, 0, 0)).collect();
    let send = t.okay(LayoutBlocks::new(&matrix, &send), "one block too many");
    let mut recv = t.okay(
        LayoutBlocksMut::new(&mut got, &[(&row, 0, 0)]),
        "one empty block",
    );
    t.err(
        world.alltoallw_view(&send, &mut recv),
        invalid,
        "alltoallw_view without one block per rank refused",
    );
}
