//! MPI-IO at the limits of a file system, in a tmpfs of its own (`FERROMPI_SMALL_TMPFS`, a
//! mount namespace the driver makes): a full disk is an error of class `NoSpace` on every
//! rank, with the path, whatever the MPI reported (Open MPI 4.1 says success, with nothing
//! written; Open MPI 5.0 `MPI_ERR_OTHER`; MPICH `MPI_ERR_IO`); a read-only file system refuses
//! a file opened for writing, and still reads.

use crate::checks::Checks;
use ferrompi::io::{AccessMode, File};
use ferrompi::{ErrorClass, ErrorKind, Mpi};

/// The tmpfs's size.
pub const MIB: u64 = 1;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let me = world.rank();
    let dir = std::path::PathBuf::from(
        std::env::var("FERROMPI_SMALL_TMPFS").expect("the driver names the small tmpfs"),
    );
    // Each rank writes more than the whole file system holds.
    let path = dir.join("full");
    let shown = path.to_str().unwrap().to_owned();
    let file = t.okay(
        File::open(&world, &path, AccessMode::CREATE | AccessMode::WRONLY, None),
        "open on the small tmpfs",
    );
    let bytes = (2 * MIB as usize) << 20;
    let big = vec![7u8; bytes];
    t.err(
        file.write_at(u64::try_from(me).unwrap() * bytes as u64, &big),
        |e: &ferrompi::Error| {
            e.class() == Some(ErrorClass::NoSpace)
                && matches!(e.kind(), ErrorKind::File { path, .. } if *path == shown)
                && e.to_string().contains(&shown)
        },
        "a write to a full file system",
    );
    t.okay(world.barrier(), "the world works after the full disk");
    t.okay(file.close(), "close the full file");
    if me == 0 {
        t.okay(File::delete(mpi, &path, None), "delete the full file");
    }
    // A read-only file system: a read-only bind mount of a directory of the tmpfs (a
    // remount of the tmpfs itself fails while an MPI holds a file of it open for writing).
    let (data, read_only) = (dir.join("data"), dir.join("read-only"));
    if me == 0 {
        t.okay(std::fs::create_dir_all(&data), "mkdir data");
        t.okay(std::fs::create_dir_all(&read_only), "mkdir read-only");
    }
    t.okay(world.barrier(), "barrier after mkdir");
    let path = data.join("kept");
    let file = t.okay(
        File::open(&world, &path, AccessMode::CREATE | AccessMode::WRONLY, None),
        "create a small file",
    );
    if me == 0 {
        t.okay(file.write_at(0, &[42u64]), "write one value");
    }
    t.okay(file.close(), "close");
    if me == 0 {
        let mounted = std::process::Command::new("sh")
            .arg("-c")
            .arg("mount --bind \"$1\" \"$2\" && mount -o remount,bind,ro \"$2\"")
            .arg("sh")
            .args([&data, &read_only])
            .status();
        t.ok(mounted.is_ok_and(|s| s.success()), "a read-only bind mount");
    }
    t.okay(world.barrier(), "barrier after the mount");
    let path = read_only.join("kept");
    let shown = path.to_str().unwrap().to_owned();
    t.err(
        File::open(&world, &path, AccessMode::WRONLY, None),
        |e: &ferrompi::Error| {
            matches!(e.class(), Some(ErrorClass::ReadOnly | ErrorClass::Access))
                && e.to_string().contains(&shown)
        },
        "opening a file on a read-only file system for writing",
    );
    let file = t.okay(
        File::open(&world, &path, AccessMode::RDONLY, None),
        "open read-only",
    );
    let mut back = [0u64];
    t.eq_ok(
        file.read_at(0, &mut back),
        1,
        "read on a read-only file system",
    );
    t.eq(back[0], 42, "the value");
    t.okay(file.close(), "close");
}
