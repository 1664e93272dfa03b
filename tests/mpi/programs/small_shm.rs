//! A shared window larger than the memory file system that backs it: the driver runs this
//! program with `/dev/shm` a tmpfs of 64 MiB of its own (a container's default size). Every
//! rank must get the same [`ErrorKind::NoMemory`], none may die of `SIGBUS` or wait forever, and a
//! window that fits must work afterwards.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::Mpi;
use ferrompi::window::SharedWindow;

/// The size of the tmpfs the driver mounts on `/dev/shm`.
pub const MIB: u64 = 64;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(
        shm_bytes().is_some_and(|bytes| bytes <= MIB << 20),
        format!("/dev/shm is a file system of at most {MIB} MiB"),
    );
    let node = t.okay(world.split_shared(0), "split_shared");
    let leader = node.rank() == 0;
    // 128 MiB on the node's first rank: twice the file system.
    let len = if leader { 16 << 20 } else { 0 };
    t.err(
        SharedWindow::<f64>::allocate(&node, len),
        |e| matches!(e.kind(), ErrorKind::NoMemory { .. }) && e.to_string().contains("/dev/shm"),
        "a 128 MiB shared window in 64 MiB",
    );
    // 24 MiB spread over every rank fits.
    let each = (3 << 20) / usize::try_from(node.size()).unwrap_or(1);
    let mut win = t.okay(
        SharedWindow::<f64>::allocate(&node, each),
        "a window that fits, afterwards",
    );
    t.okay(win.write(), "write epoch").local().fill(1.5);
    let read = t.okay(win.read(), "read epoch");
    let total: f64 = read.segments().flatten().sum();
    t.eq(
        total,
        1.5 * (each as f64) * f64::from(node.size()),
        "the sum over the window",
    );
}

/// The size of the file system mounted on `/dev/shm`.
#[allow(clippy::useless_conversion)] // 32-bit fields on 32-bit targets
fn shm_bytes() -> Option<u64> {
    let path = std::ffi::CString::new("/dev/shm").ok()?;
    // SAFETY: all-zero is a valid `statvfs` (plain integers).
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a `statvfs` to write.
    (unsafe { libc::statvfs(path.as_ptr(), &mut stats) } == 0)
        .then(|| u64::from(stats.f_blocks) * u64::from(stats.f_frsize))
}
