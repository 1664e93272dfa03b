//! MPI-IO: every access family (explicit offsets, individual and shared pointers, blocking,
//! nonblocking and split collective, independent and collective) written by every rank and
//! read back, checked against the bytes of the file (read with `std::fs`); views over
//! subarray and darray filetypes, `external32`; the error cases (a missing directory, an
//! existing file with `EXCL`, a bad mode, modes that differ between ranks, a read-only file,
//! a read past the end); a leaked split-collective guard; offsets past 4 GiB (a sparse file)
//! and one transfer of more than `i32::MAX` bytes where the disk has room.

use crate::checks::Checks;
use ferrompi::io::{AccessMode, DataRep, File};
use ferrompi::{DerivedType, Distribution, Equivalence, ErrorClass, ErrorKind, Mpi, Order, scope};
use std::io::SeekFrom;
use std::path::PathBuf;

/// Values each rank writes per family.
const N: usize = 1000;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let dir = shared_dir(mpi, t);
    explicit_offsets(mpi, &dir, t);
    file_pointers(mpi, &dir, t);
    shared_pointer(mpi, &dir, t);
    nonblocking(mpi, &dir, t);
    split_collectives(mpi, &dir, t);
    views(mpi, &dir, t);
    management(mpi, &dir, t);
    errors(mpi, &dir, t);
    large(mpi, &dir, t);
    let world = mpi.world();
    t.okay(world.barrier(), "barrier before removing the directory");
    if world.rank() == 0 {
        t.okay(std::fs::remove_dir_all(&dir), "remove the directory");
    }
}

/// A directory every rank names alike: rank 0's temporary directory and process id.
fn shared_dir(mpi: &Mpi, t: &mut Checks) -> PathBuf {
    let world = mpi.world();
    let mut id = [u64::from(std::process::id())];
    t.okay(world.bcast(&mut id, 0), "bcast the directory's id");
    let dir = std::env::temp_dir().join(format!("ferrompi-file-io-{}", id[0]));
    if world.rank() == 0 {
        t.okay(std::fs::create_dir_all(&dir), "create the directory");
    }
    t.okay(world.barrier(), "barrier after creating the directory");
    dir
}

/// Rank `r`'s values: distinct per rank and index.
fn values(rank: i32, salt: u64) -> Vec<u64> {
    (0..N as u64)
        .map(|i| salt * 1_000_000_000 + u64::try_from(rank).unwrap() * 1_000_000 + i)
        .collect()
}

/// The file's bytes as u64s, read outside MPI (rank 0 calls it after a sync and barrier).
fn file_u64s(path: &PathBuf) -> Vec<u64> {
    let bytes = std::fs::read(path).expect("read the file back with std::fs");
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Checks on rank 0 that the file holds `want` (read outside MPI), then holds every rank until
/// it has (others would change the file meanwhile). Shows the first difference, not the file.
fn file_is(mpi: &Mpi, path: &PathBuf, want: &[u64], what: &str, t: &mut Checks) {
    if mpi.world().rank() == 0 {
        let got = file_u64s(path);
        let first = got.iter().zip(want).position(|(g, w)| g != w);
        t.eq(
            (got.len(), first),
            (want.len(), None),
            format!("{what} (length, first difference)"),
        );
    }
    t.okay(mpi.world().barrier(), "barrier after checking the file");
}

/// The whole file as each rank's block after the other, in rank order.
fn in_rank_order(size: i32, salt: u64) -> Vec<u64> {
    (0..size).flat_map(|r| values(r, salt)).collect()
}

/// Opens `path` on `comm` for reading and writing, creating it.
fn open_rw<'c>(
    comm: &'c ferrompi::Communicator<'_>,
    path: &std::path::Path,
    what: &str,
    t: &mut Checks,
) -> File<'c> {
    t.okay(
        File::open(comm, path, AccessMode::CREATE | AccessMode::RDWR, None),
        what,
    )
}

/// Makes what every rank wrote visible to every rank (MPI-4.0 §14.6.1: sync, barrier, sync).
fn settle(file: &File<'_>, mpi: &Mpi, t: &mut Checks) {
    t.okay(file.sync(), "sync");
    t.okay(mpi.world().barrier(), "barrier");
    t.okay(file.sync(), "sync");
}

fn explicit_offsets(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let block = (N * 8) as u64;
    for collective in [false, true] {
        let path = dir.join(format!("explicit-{collective}"));
        let file = open_rw(&world, &path, "open for explicit offsets", t);
        let mine = values(me, 1);
        let at = u64::try_from(me).unwrap() * block;
        if collective {
            t.okay(file.write_at_all(at, &mine), "write_at_all");
        } else {
            t.okay(file.write_at(at, &mine), "write_at");
        }
        settle(&file, mpi, t);
        file_is(
            mpi,
            &path,
            &in_rank_order(size, 1),
            "the file, in rank order",
            t,
        );
        t.eq_ok(file.get_size(), block * size as u64, "get_size");
        let right = (me + 1) % size;
        let mut theirs = vec![0u64; N];
        let read = if collective {
            file.read_at_all(u64::try_from(right).unwrap() * block, &mut theirs)
        } else {
            file.read_at(u64::try_from(right).unwrap() * block, &mut theirs)
        };
        t.eq_ok(read, N, "read the right neighbour's block");
        t.eq(theirs, values(right, 1), "the right neighbour's values");
        // A read from the last block on: the end of the file cuts it short.
        let mut past = vec![7u64; N];
        let last = u64::try_from(size - 1).unwrap() * block + block / 2;
        t.eq_ok(
            file.read_at(last, &mut past),
            N / 2,
            "a read past the end counts what it read",
        );
        t.eq(
            &past[..N / 2],
            &values(size - 1, 1)[N / 2..],
            "what it read",
        );
        t.ok(past[N / 2..].iter().all(|&v| v == 7), "the rest untouched");
        // The same read, collective, on every rank: counted from the file's end (ROMIO and
        // Open MPI 4.1's OMPIO report the whole buffer), at an offset and at the pointer. (Not
        // split: Open MPI 4.1's split collective read past the end never ends at 3 processes.)
        let mut past_all = vec![7u64; N];
        t.eq_ok(
            file.read_at_all(last, &mut past_all),
            N / 2,
            "read_at_all past the end counts what it read",
        );
        t.eq(
            &past_all[..N / 2],
            &values(size - 1, 1)[N / 2..],
            "what read_at_all read past the end",
        );
        t.okay(file.seek(SeekFrom::Start(last)), "seek near the end");
        t.eq_ok(
            file.read_all(&mut past_all),
            N / 2,
            "read_all past the end counts what it read",
        );
        let mut beyond = [1u64; 4];
        t.eq_ok(
            file.read_at(block * 1000, &mut beyond),
            0,
            "a read beyond the end reads nothing",
        );
        // A part of a value at the end: the whole values are counted.
        // After every rank's reads (set_size may change the file on one rank at once).
        t.okay(world.barrier(), "barrier before set_size");
        t.okay(
            file.set_size(block * size as u64 + 4),
            "four more bytes (collective)",
        );
        let mut tail = [0u64; 2];
        t.eq_ok(
            file.read_at(block * size as u64 - 8, &mut tail),
            1,
            "a value and a half read as one",
        );
        t.okay(world.barrier(), "barrier before close");
        t.okay(file.close(), "close");
    }
}

fn file_pointers(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let block = (N * 8) as u64;
    for collective in [false, true] {
        let path = dir.join(format!("pointer-{collective}"));
        let file = open_rw(&world, &path, "open for file pointers", t);
        let at = u64::try_from(me).unwrap() * block;
        t.okay(file.seek(SeekFrom::Start(at)), "seek to the block");
        let mine = values(me, 2);
        // Two halves: the pointer moves past each.
        let (first, second) = mine.split_at(N / 2);
        if collective {
            t.okay(file.write_all(first), "write_all");
            t.okay(file.write_all(second), "write_all");
        } else {
            t.okay(file.write(first), "write");
            t.okay(file.write(second), "write");
        }
        t.eq_ok(
            file.get_position(),
            at + block,
            "the pointer moved past the block",
        );
        t.eq_ok(
            file.get_byte_offset(3),
            3,
            "byte offset in the default view",
        );
        settle(&file, mpi, t);
        file_is(
            mpi,
            &path,
            &in_rank_order(size, 2),
            "the file, in rank order",
            t,
        );
        t.okay(file.seek(SeekFrom::Current(-(block as i64))), "seek back");
        let mut back = vec![0u64; N];
        let read = if collective {
            file.read_all(&mut back)
        } else {
            file.read(&mut back)
        };
        t.eq_ok(read, N, "read the block back");
        t.eq(back, mine, "the block read back");
        t.okay(file.seek(SeekFrom::End(-8)), "seek from the end");
        let mut last = [0u64];
        t.eq_ok(file.read(&mut last), 1, "read the last value");
        t.eq(last[0], values(size - 1, 2)[N - 1], "the last value");
        t.err(
            file.seek(SeekFrom::Current(-1_000_000_000)),
            |e: &ferrompi::Error| e.class().is_some(),
            "a seek before the start",
        );
        t.okay(file.close(), "close");
    }
}

fn shared_pointer(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let path = dir.join("shared");
    let file = open_rw(&world, &path, "open for the shared pointer", t);
    // Ordered: rank order.
    t.okay(file.write_ordered(&values(me, 3)), "write_ordered");
    t.eq_ok(
        file.get_position_shared(),
        (N * size as usize) as u64 * 8,
        "the shared pointer after write_ordered",
    );
    settle(&file, mpi, t);
    file_is(
        mpi,
        &path,
        &in_rank_order(size, 3),
        "write_ordered is in rank order",
        t,
    );
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    let mut mine = vec![0u64; N];
    t.eq_ok(file.read_ordered(&mut mine), N, "read_ordered");
    t.eq(
        mine,
        values(me, 3),
        "read_ordered gives each rank its block",
    );
    // Independent: whatever order the ranks come in, every block once, whole.
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    t.okay(world.barrier(), "barrier");
    t.okay(file.write_shared(&values(me, 4)), "write_shared");
    settle(&file, mpi, t);
    if me == 0 {
        let got = file_u64s(&path);
        let mut blocks: Vec<Vec<u64>> = got.chunks(N).map(<[u64]>::to_vec).collect();
        blocks.sort();
        let want: Vec<Vec<u64>> = (0..size).map(|r| values(r, 4)).collect();
        t.eq(blocks, want, "write_shared wrote every block once, whole");
    }
    t.okay(world.barrier(), "barrier after checking the file");
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    let mut one = vec![0u64; N];
    t.eq_ok(file.read_shared(&mut one), N, "read_shared");
    t.ok(
        (0..size).any(|r| one == values(r, 4)),
        "read_shared read one whole block",
    );
    t.okay(file.close(), "close");
}

fn nonblocking(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let block = (N * 8) as u64;
    let at = u64::try_from(me).unwrap() * block;
    for collective in [false, true] {
        let path = dir.join(format!("nonblocking-{collective}"));
        let file = open_rw(&world, &path, "open for nonblocking", t);
        let mine = values(me, 5);
        let written = scope(|s| {
            let request = if collective {
                file.iwrite_at_all(s, at, &mine)?
            } else {
                file.iwrite_at(s, at, &mine)?
            };
            request.wait()?.count::<u64>()
        });
        t.eq_ok(written, N, "iwrite_at(_all) wrote the block");
        settle(&file, mpi, t);
        file_is(
            mpi,
            &path,
            &in_rank_order(size, 5),
            "the file, in rank order",
            t,
        );
        let mut back = vec![0u64; N];
        let read = scope(|s| {
            let request = if collective {
                file.iread_at_all(s, at, &mut back)?
            } else {
                file.iread_at(s, at, &mut back)?
            };
            request.wait()?.count::<u64>()
        });
        t.eq_ok(read, N, "iread_at(_all)");
        t.eq(&back, &mine, "iread_at(_all) read the block");
        // Through the individual pointer.
        t.okay(file.seek(SeekFrom::Start(at)), "seek");
        let twice: Vec<u64> = mine.iter().map(|v| v * 2).collect();
        let written = scope(|s| {
            let request = if collective {
                file.iwrite_all(s, &twice)?
            } else {
                file.iwrite(s, &twice)?
            };
            request.wait()?.count::<u64>()
        });
        t.eq_ok(written, N, "iwrite(_all)");
        settle(&file, mpi, t);
        t.okay(file.seek(SeekFrom::Start(at)), "seek");
        let read = scope(|s| {
            let request = if collective {
                file.iread_all(s, &mut back)?
            } else {
                file.iread(s, &mut back)?
            };
            request.wait()?.count::<u64>()
        });
        t.eq_ok(read, N, "iread(_all)");
        t.eq(&back, &twice, "iread(_all) read what iwrite(_all) wrote");
        // A bool buffer: whatever bytes the file holds come back as valid bools.
        let mut flags = [false; 16];
        let read = scope(|s| file.iread_at(s, at, &mut flags)?.wait()?.count::<bool>());
        t.eq_ok(read, 16, "iread_at into bools");
        t.ok(
            flags.iter().all(|&b| u8::from(b) <= 1),
            "bools read from arbitrary bytes are valid",
        );
        t.okay(file.close(), "close");
    }
    // The shared pointer.
    let path = dir.join("nonblocking-shared");
    let file = open_rw(&world, &path, "open for nonblocking shared", t);
    let mine = values(me, 6);
    let written = scope(|s| file.iwrite_shared(s, &mine)?.wait()?.count::<u64>());
    t.eq_ok(written, N, "iwrite_shared");
    settle(&file, mpi, t);
    t.eq_ok(file.get_size(), block * size as u64, "every block written");
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    let mut one = vec![0u64; N];
    let read = scope(|s| file.iread_shared(s, &mut one)?.wait()?.count::<u64>());
    t.eq_ok(read, N, "iread_shared");
    t.ok(
        (0..size).any(|r| one == values(r, 6)),
        "iread_shared read a whole block",
    );
    t.okay(file.close(), "close");
}

fn split_collectives(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let block = (N * 8) as u64;
    let at = u64::try_from(me).unwrap() * block;
    let path = dir.join("split");
    let mut file = open_rw(&world, &path, "open for split collectives", t);
    let guard = t.okay(
        file.write_at_all_begin(at, values(me, 7)),
        "write_at_all_begin",
    );
    t.err(
        file.read_at_all_begin(0, vec![0u64; 1]),
        |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "a second split collective while one is active",
    );
    let (buffer, written) = guard.end();
    t.eq_ok(written, N, "write_at_all_end");
    t.eq(buffer, values(me, 7), "the buffer comes back");
    settle(&file, mpi, t);
    file_is(
        mpi,
        &path,
        &in_rank_order(size, 7),
        "the file, in rank order",
        t,
    );
    let (back, read) = t
        .okay(
            file.read_at_all_begin(at, vec![0u64; N]),
            "read_at_all_begin",
        )
        .end();
    t.eq_ok(read, N, "read_at_all_end");
    t.eq(back, values(me, 7), "read_at_all read the block");
    // The individual pointer and the shared one.
    t.okay(file.seek(SeekFrom::Start(at)), "seek");
    let (_, written) = t
        .okay(file.write_all_begin(values(me, 8)), "write_all_begin")
        .end();
    t.eq_ok(written, N, "write_all_end");
    settle(&file, mpi, t);
    t.okay(file.seek(SeekFrom::Start(at)), "seek");
    let (back, read) = t
        .okay(file.read_all_begin(vec![0u64; N]), "read_all_begin")
        .end();
    t.eq_ok(read, N, "read_all_end");
    t.eq(back, values(me, 8), "read_all read the block");
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    let (_, written) = t
        .okay(
            file.write_ordered_begin(values(me, 9)),
            "write_ordered_begin",
        )
        .end();
    t.eq_ok(written, N, "write_ordered_end");
    settle(&file, mpi, t);
    file_is(
        mpi,
        &path,
        &in_rank_order(size, 9),
        "write_ordered_begin in rank order",
        t,
    );
    t.okay(file.seek_shared(SeekFrom::Start(0)), "seek_shared");
    let (back, read) = t
        .okay(file.read_ordered_begin(vec![0u64; N]), "read_ordered_begin")
        .end();
    t.eq_ok(read, N, "read_ordered_end");
    t.eq(
        back,
        values(me, 9),
        "read_ordered_begin gives each rank its block",
    );
    // A dropped guard ends the operation.
    drop(t.okay(
        file.read_at_all_begin(at, vec![0u64; N]),
        "begin, then drop",
    ));
    // A leaked guard leaks its buffer; the file ends the operation when it closes.
    std::mem::forget(t.okay(
        file.read_at_all_begin(at, vec![0u64; N]),
        "begin, then forget",
    ));
    t.err(
        file.read_at_all_begin(at, vec![0u64; N]),
        |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "the leaked one is still active",
    );
    // Changing the view needs `&mut`: no guard can be alive (it borrows the file).
    t.okay(
        file.set_view::<u64>(0, u64::datatype(), DataRep::Native, None),
        "set_view",
    );
    t.okay(file.close(), "close ends the leaked split collective first");
}

fn views(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    // A global ROWS × (COLS·size) array of f64, each rank owning COLS columns.
    const ROWS: i32 = 6;
    const COLS: i32 = 5;
    let path = dir.join("subarray");
    let mut file = open_rw(&world, &path, "open for a subarray view", t);
    let block = t.okay(
        DerivedType::subarray(
            mpi,
            &[ROWS as usize, (COLS * size) as usize],
            &[ROWS as usize, COLS as usize],
            &[0, (COLS * me) as usize],
            Order::C,
            f64::datatype(),
        ),
        "subarray",
    );
    let header = 16u64; // bytes before the array
    t.okay(
        file.set_view::<f64>(header, &block, DataRep::Native, None),
        "set_view over the subarray",
    );
    let mine: Vec<f64> = (0..ROWS * COLS).map(|i| f64::from(me * 1000 + i)).collect();
    t.okay(
        file.write_at_all(0, &mine),
        "write the block through the view",
    );
    settle(&file, mpi, t);
    if me == 0 {
        let bytes = std::fs::read(&path).expect("read the file");
        let global: Vec<f64> = bytes[header as usize..]
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<f64> = (0..ROWS)
            .flat_map(|r| {
                (0..COLS * size).map(move |c| f64::from((c / COLS) * 1000 + r * COLS + c % COLS))
            })
            .collect();
        t.eq(global, want, "each rank's columns in the global array");
    }
    t.okay(world.barrier(), "barrier after checking the file");
    let mut back = vec![0.0f64; (ROWS * COLS) as usize];
    t.eq_ok(
        file.read_at_all(0, &mut back),
        back.len(),
        "read through the view",
    );
    t.eq(&back, &mine, "the block read back through the view");
    // Offsets count etypes of the view, skipping the holes.
    let mut one = [0.0f64];
    t.eq_ok(
        file.read_at(u64::try_from(COLS).unwrap(), &mut one),
        1,
        "read_at etype COLS",
    );
    t.eq(one[0], mine[COLS as usize], "the second row's first value");
    t.eq_ok(
        file.get_byte_offset(u64::try_from(COLS).unwrap()),
        header + 8 * u64::try_from(COLS * size + COLS * me).unwrap(),
        "get_byte_offset through the view",
    );
    let view = t.okay(file.get_view(mpi), "get_view");
    t.eq(view.disp, header, "get_view's displacement");
    t.eq(
        view.datarep,
        Some(DataRep::Native),
        "get_view's representation",
    );
    t.ok(
        matches!(view.filetype, ferrompi::datatype::ContentType::Derived(_)),
        "get_view's filetype is derived",
    );
    t.ok(
        matches!(view.etype, ferrompi::datatype::ContentType::Named(d) if d.as_raw() == f64::datatype().as_raw()),
        "get_view's etype is f64's",
    );
    // A value that is not whole etypes of the view is refused.
    t.err(
        file.write_at(0, &[1u32]),
        |e: &ferrompi::Error| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "a u32 through an f64 view",
    );
    t.eq_ok(
        file.read_at(0, &mut [[0.0f64; 2]]),
        1,
        "[f64; 2] is whole etypes",
    );
    t.okay(file.close(), "close");

    // A block-cyclic darray over a 1-D array, round trip.
    let path = dir.join("darray");
    let mut file = open_rw(&world, &path, "open for a darray view", t);
    let global = 7 * size;
    let cyclic = t.okay(
        DerivedType::darray(
            mpi,
            size as usize,
            me as usize,
            &[global as usize],
            &[Distribution::Cyclic(Some(2))],
            &[size as usize],
            Order::C,
            i32::datatype(),
        ),
        "darray",
    );
    t.okay(
        file.set_view::<i32>(0, &cyclic, DataRep::Native, None),
        "set_view over the darray",
    );
    // The global indices this rank owns, in order: blocks of 2 dealt round-robin.
    let owned: Vec<i32> = (0..global).filter(|i| (i / 2) % size == me).collect();
    t.okay(file.write_all(&owned), "write the owned indices");
    settle(&file, mpi, t);
    if me == 0 {
        let bytes = std::fs::read(&path).expect("read the file");
        let all: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        t.eq(
            all,
            (0..global).collect::<Vec<_>>(),
            "the darray file is 0..n in order",
        );
    }
    t.okay(world.barrier(), "barrier after checking the file");
    t.okay(file.close(), "close");

    // external32: big-endian in the file, native in memory.
    let path = dir.join("external32");
    let mut file = open_rw(&world, &path, "open for external32", t);
    t.okay(
        file.set_view::<u32>(0, u32::datatype(), DataRep::External32, None),
        "set_view external32",
    );
    let mine = [0x0102_0304u32 + u32::try_from(me).unwrap(), 0xA0B0_C0D0];
    t.okay(
        file.write_at_all(u64::try_from(me).unwrap() * 2, &mine),
        "write external32",
    );
    settle(&file, mpi, t);
    if me == 0 {
        let bytes = std::fs::read(&path).expect("read the file");
        let want: Vec<u8> = (0..size)
            .flat_map(|r| {
                [0x0102_0304u32 + u32::try_from(r).unwrap(), 0xA0B0_C0D0]
                    .into_iter()
                    .flat_map(u32::to_be_bytes)
            })
            .collect();
        t.eq(bytes, want, "external32 is big-endian in the file");
    }
    t.okay(world.barrier(), "barrier after checking the file");
    let mut back = [0u32; 2];
    t.eq_ok(
        file.read_at_all(u64::try_from(me).unwrap() * 2, &mut back),
        2,
        "read external32",
    );
    t.eq(back, mine, "external32 read back natively");
    t.eq_ok(
        file.get_view(mpi).map(|v| v.datarep),
        Some(DataRep::External32),
        "get_view says external32",
    );
    t.okay(file.close(), "close");
}

fn management(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let me = world.rank();
    let path = dir.join("managed");
    let hints = t.okay(
        ferrompi::Info::with(
            mpi,
            &[("cb_buffer_size", "1048576"), ("romio_cb_write", "enable")],
        ),
        "hints",
    );
    let mode = AccessMode::CREATE | AccessMode::RDWR | AccessMode::UNIQUE_OPEN;
    let file = t.okay(
        File::open(&world, &path, mode, Some(&hints)),
        "open with hints",
    );
    t.eq_ok(file.get_amode(), mode, "get_amode");
    t.eq(file.path(), path.to_str().unwrap(), "path");
    let group = t.okay(file.get_group(), "get_group");
    t.eq_ok(group.size(), world.size(), "get_group's size");
    let info = t.okay(file.get_info(), "get_info");
    let hints_reported = t.okay(info.len(), "info len");
    t.ok(hints_reported > 0, "MPI reports some hints");
    t.okay(file.set_info(&hints), "set_info");
    t.okay(file.preallocate(4096), "preallocate");
    // Open MPI 4.1 grows the file on one process and returns on the others at once: the new
    // size is seen after a sync and a barrier.
    settle(&file, mpi, t);
    let preallocated = t.okay(file.get_size(), "get_size");
    t.ok(preallocated >= 4096, "preallocated");
    t.okay(world.barrier(), "every rank saw the size before it changes");
    t.okay(file.set_size(100), "set_size");
    settle(&file, mpi, t);
    t.eq_ok(file.get_size(), 100, "set_size truncates");
    t.okay(file.set_atomicity(true), "set_atomicity");
    t.eq_ok(file.get_atomicity(), true, "get_atomicity");
    t.okay(file.set_atomicity(false), "set_atomicity off");
    t.okay(file.close(), "close");
    t.okay(world.barrier(), "barrier");
    if me == 0 {
        t.okay(File::delete(mpi, &path, None), "delete");
        t.ok(!path.exists(), "deleted");
    }
    // DELETE_ON_CLOSE.
    let path = dir.join("scratch");
    let file = t.okay(
        File::open(
            &world,
            &path,
            AccessMode::CREATE | AccessMode::RDWR | AccessMode::DELETE_ON_CLOSE,
            None,
        ),
        "open DELETE_ON_CLOSE",
    );
    t.okay(
        file.write_at(u64::try_from(me).unwrap(), &[1u8]),
        "write a byte",
    );
    drop(file);
    t.okay(world.barrier(), "barrier");
    t.ok(!path.exists(), "DELETE_ON_CLOSE deleted it");
}

fn errors(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let (me, size) = (world.rank(), world.size());
    let class_and_path = |class: ErrorClass, path: &std::path::Path| {
        let path = path.to_str().unwrap().to_owned();
        move |e: &ferrompi::Error| {
            e.class() == Some(class)
                && matches!(e.kind(), ErrorKind::File { path: p, .. } if *p == path)
                && e.to_string().contains(&path)
        }
    };
    let missing = dir.join("no-such-dir").join("file");
    t.err(
        File::open(&world, &missing, AccessMode::RDONLY, None),
        class_and_path(ErrorClass::NoSuchFile, &missing),
        "a missing directory",
    );
    t.err(
        File::open(
            &world,
            &missing,
            AccessMode::CREATE | AccessMode::WRONLY,
            None,
        ),
        |e: &ferrompi::Error| e.class() == Some(ErrorClass::NoSuchFile),
        "creating in a missing directory",
    );
    let exists = dir.join("exists");
    drop(t.okay(
        File::open(
            &world,
            &exists,
            AccessMode::CREATE | AccessMode::WRONLY,
            None,
        ),
        "create",
    ));
    t.err(
        File::open(
            &world,
            &exists,
            AccessMode::CREATE | AccessMode::EXCL | AccessMode::WRONLY,
            None,
        ),
        class_and_path(ErrorClass::FileExists, &exists),
        "EXCL on an existing file",
    );
    t.err(
        File::open(
            &world,
            &exists,
            AccessMode::RDONLY | AccessMode::WRONLY,
            None,
        ),
        class_and_path(ErrorClass::Amode, &exists),
        "RDONLY | WRONLY",
    );
    t.err(
        File::open(
            &world,
            &exists,
            AccessMode::RDONLY | AccessMode::CREATE,
            None,
        ),
        class_and_path(ErrorClass::Amode, &exists),
        "RDONLY | CREATE",
    );
    if size > 1 {
        let mode = if me == size - 1 {
            AccessMode::RDWR
        } else {
            AccessMode::RDONLY
        };
        t.err(
            File::open(&world, &exists, mode, None),
            class_and_path(ErrorClass::NotSame, &exists),
            "different modes on different ranks",
        );
    }
    // A write to a file opened read-only.
    let file = t.okay(
        File::open(&world, &exists, AccessMode::RDONLY, None),
        "open read-only",
    );
    t.err(
        file.write_at(0, &[1u8]),
        |e: &ferrompi::Error| {
            matches!(
                e.class(),
                Some(ErrorClass::ReadOnly | ErrorClass::Access | ErrorClass::Amode)
            )
        },
        "a write to a file opened read-only",
    );
    t.okay(file.close(), "close");
    // A file the permissions make read-only (root is not bound by them).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        if me == 0 {
            t.okay(
                std::fs::set_permissions(&exists, std::fs::Permissions::from_mode(0o444)),
                "chmod 444",
            );
        }
        t.okay(world.barrier(), "barrier");
        t.err(
            File::open(&world, &exists, AccessMode::WRONLY, None),
            class_and_path(ErrorClass::Access, &exists),
            "a read-only file opened for writing",
        );
    }
    t.okay(world.barrier(), "the world works after the refusals");
}

/// Offsets past 4 GiB in a sparse file; at 2 ranks, one transfer of more than `i32::MAX`
/// bytes (a count over `int`) where the file system has room for it.
fn large(mpi: &Mpi, dir: &std::path::Path, t: &mut Checks) {
    let world = mpi.world();
    let me = world.rank();
    let path = dir.join("sparse");
    let file = open_rw(&world, &path, "open sparse", t);
    let far = (5u64 << 30) + u64::try_from(me).unwrap() * 8;
    t.okay(
        file.write_at(far, &[u64::try_from(me).unwrap() + 11]),
        "write past 4 GiB",
    );
    settle(&file, mpi, t);
    let mut back = [0u64];
    t.eq_ok(file.read_at(far, &mut back), 1, "read past 4 GiB");
    t.eq(
        back[0],
        u64::try_from(me).unwrap() + 11,
        "the value past 4 GiB",
    );
    t.okay(file.close(), "close");
    // One rank moves 2 GiB + 16 bytes in one call, if the disk and memory have room: at 2
    // ranks only (rank 0 alone does it, the same at any size; 10-20 s a run in a debug build).
    let bytes = (1usize << 31) + 16;
    let room = world.size() == 2 && free_bytes(dir).unwrap_or(0) > 3 * bytes as u64;
    let mut room = [u8::from(room && me == 0)];
    t.okay(world.bcast(&mut room, 0), "bcast room");
    if room[0] == 1 {
        let path = dir.join("large");
        let file = open_rw(&world, &path, "open large", t);
        if me == 0 {
            let mut big = vec![0u8; bytes];
            big[0] = 1;
            big[bytes - 1] = 2;
            big[1 << 31] = 3;
            t.okay(file.write_at(0, &big), "write 2 GiB + 16 bytes at once");
            big.iter_mut().for_each(|b| *b = 0);
            t.eq_ok(
                file.read_at(0, &mut big),
                bytes,
                "read 2 GiB + 16 bytes at once",
            );
            t.eq(
                (big[0], big[1 << 31], big[bytes - 1]),
                (1, 3, 2),
                "the large transfer's marks",
            );
        }
        t.okay(file.close(), "close large");
        if me == 0 {
            t.okay(std::fs::remove_file(&path), "remove the large file");
        }
    } else if me == 0 && world.size() == 2 {
        println!(
            "file_io: no room for a 2 GiB transfer in {}; skipped",
            dir.display()
        );
    }
}

/// The free bytes of the file system holding `dir`.
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.to_str()?).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and room for one statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs succeeded and filled it.
    let stat = unsafe { stat.assume_init() };
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}
