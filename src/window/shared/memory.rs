//! Whether the node's memory can back a shared window, decided alike on every process before
//! any of it is touched.
//!
//! MPIs back shared windows with a file in a memory file system (`/dev/shm` on Linux, for
//! Open MPI's `osc/sm` and for MPICH), created sparse: the pages exist only once touched. When
//! the file system is smaller than the window (a container's default `/dev/shm` is 64 MiB),
//! MPICH returns a window whose first store raises `SIGBUS`, and Open MPI fails on the node's
//! first process alone while the others wait in the allocation forever. So:
//!
//! 1. Before MPI is called, the node's rank 0 reads the free room of that file system
//!    ([`free_room`]) and every process learns it in the same allgather as the lengths; every
//!    process then compares the whole window with it ([`check_room`]) and refuses alike.
//! 2. After MPI returns, each process has the kernel zero its own segment ([`zero_backed`]:
//!    `read` from `/dev/zero` into it), which backs every page with memory as it goes: where
//!    the file system has no page left, the kernel's write fails (`EFAULT`) where a store of the
//!    program's would raise `SIGBUS`. The processes agree on the outcome before any of them
//!    returns the window, so none stores into a segment that is not backed.

use crate::error::{ErrorKind, Result};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;

/// The directory the running MPI backs shared windows in: Open MPI's
/// `osc_sm_backing_directory` where set, else `/dev/shm`.
fn backing_directory() -> String {
    std::env::var("OMPI_MCA_osc_sm_backing_directory").unwrap_or_else(|_| "/dev/shm".into())
}

/// The backing directory, opened once (`O_PATH`), or `None` where it cannot be: `fstatvfs` on
/// it skips the path lookup a `statvfs` makes (a few microseconds on every allocation, most of
/// what a small window's checks cost beside MPI's own work).
static BACKING: OnceLock<Option<OwnedFd>> = OnceLock::new();

fn backing() -> Option<BorrowedFd<'static>> {
    BACKING
        .get_or_init(|| {
            let path = CString::new(backing_directory()).ok()?;
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
            // SAFETY: a NUL-terminated path; `open` makes a new descriptor or returns -1.
            let fd = unsafe { libc::open(path.as_ptr(), flags) };
            // SAFETY: `fd` was just opened, and nothing else owns it.
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
        })
        .as_ref()
        .map(AsFd::as_fd)
}

/// Free bytes in the file system that backs shared windows; `u64::MAX` where it cannot be
/// read (no such directory: the check is then left to [`populate`]).
pub(super) fn free_room() -> u64 {
    let Some(directory) = backing() else {
        return u64::MAX;
    };
    // SAFETY: all-zero is a valid `statvfs` (plain integers).
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor and a `statvfs` to write.
    if unsafe { libc::fstatvfs(directory.as_raw_fd(), &mut stats) } != 0 {
        return u64::MAX;
    }
    // `fsblkcnt_t` and `c_ulong` are `u64` here, 32 bits on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    let (blocks, block) = (u64::from(stats.f_bavail), u64::from(stats.f_frsize));
    blocks.saturating_mul(block)
}

/// The bytes of a page, for the MPIs' rounding of each segment.
fn page_bytes() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).unwrap_or(4096).max(1)
}

/// Compares a window of `bytes` in all, over `processes` segments, with the free `room`
/// ([`free_room`] on the node's rank 0): every process passes the same numbers, so every one
/// gets the same answer.
pub(super) fn check_room(
    bytes: u64,
    processes: usize,
    room: u64,
    operation: &'static str,
) -> Result<()> {
    // Each segment may be rounded up to a page.
    let slack = page_bytes().saturating_mul(processes as u64);
    if bytes.saturating_add(slack) <= room {
        return Ok(());
    }
    Err(ErrorKind::NoMemory {
        operation,
        reason: format!(
            "the shared window needs {bytes} bytes, and {} has {room} bytes free; a larger \
             /dev/shm (docker --shm-size, or the node's tmpfs size) or a smaller window is needed",
            backing_directory()
        ),
    }
    .into())
}

/// `/dev/zero`, opened once, or `None` where it cannot be (then [`zero_backed`] asks for the
/// pages with `madvise` and zeroes them itself).
static ZERO: OnceLock<Option<std::fs::File>> = OnceLock::new();

/// Zeroes `bytes` bytes at `start` and backs their pages with memory, or says why the node's
/// memory cannot: the kernel copies from `/dev/zero` into them, faulting each page in as a
/// store would, and where a page cannot be had (the memory file system is full) the copy stops
/// with `EFAULT` instead of a signal. One system call for the whole range: at 4 KiB it costs
/// about what a store's page fault does, and from a megabyte on less than faulting the pages
/// one by one from user space.
///
/// # Safety
/// `start..start + bytes` is memory of this process's mapping that nothing else reads or
/// writes meanwhile, and for which all-zero bytes are valid values.
pub(super) unsafe fn zero_backed(start: *mut u8, bytes: usize) -> std::result::Result<(), String> {
    let zero = ZERO.get_or_init(|| std::fs::File::open("/dev/zero").ok());
    let Some(zero) = zero else {
        populate(start, bytes)?;
        // SAFETY: the caller's range, backed now (or on a kernel that cannot tell).
        unsafe { std::ptr::write_bytes(start, 0, bytes) };
        return Ok(());
    };
    let mut done = 0;
    while done < bytes {
        // SAFETY: the caller's range from `done` on, which the kernel writes zeroes into.
        let n = unsafe {
            libc::read(
                zero.as_raw_fd(),
                start.add(done).cast(),
                (bytes - done).min(1 << 30),
            )
        };
        match usize::try_from(n) {
            Ok(0) => return Err("/dev/zero ended".into()),
            Ok(n) => done += n,
            Err(_) => {
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error.to_string());
                }
            }
        }
    }
    Ok(())
}

/// Backs `bytes` bytes at `start` with memory (`MADV_POPULATE_WRITE`), without changing them.
/// `Ok` also where the kernel cannot tell (before Linux 5.14, or memory it does not populate).
fn populate(start: *mut u8, bytes: usize) -> std::result::Result<(), String> {
    if bytes == 0 {
        return Ok(());
    }
    let page = usize::try_from(page_bytes()).unwrap_or(4096);
    let first = (start as usize) & !(page - 1);
    let end = (start as usize)
        .saturating_add(bytes)
        .next_multiple_of(page);
    // SAFETY: the pages holding `bytes` bytes MPI mapped for this process (a range inside
    // mapped pages); MADV_POPULATE_WRITE prefaults them as a write would, and changes no byte.
    let rc = unsafe {
        libc::madvise(
            first as *mut libc::c_void,
            end - first,
            libc::MADV_POPULATE_WRITE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINVAL | libc::EPERM) => Ok(()),
        _ => Err(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A shared mapping two pages long over a file one page long: a store into its second page
    /// raises `SIGBUS`, so zeroing both pages must be an error, and zeroing the first page not.
    #[test]
    fn zeroing_reports_memory_a_store_would_die_on() {
        let page = usize::try_from(page_bytes()).unwrap();
        let path = std::env::temp_dir().join(format!("ferrompi-zero-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut &file, &vec![7u8; page]).unwrap();
        // SAFETY: a new shared mapping of a file we opened read-write; unmapped below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let map = map.cast::<u8>();
        // SAFETY: the mapping's first page, inside the file; bytes, which zero is valid for.
        assert_eq!(unsafe { zero_backed(map.add(8), page - 8) }, Ok(()));
        // SAFETY: the first page, which the file backs.
        let first = unsafe { std::slice::from_raw_parts(map, page) };
        assert_eq!(first[..8], [7; 8]);
        assert!(first[8..].iter().all(|&b| b == 0));
        // SAFETY: both pages of the mapping; the second lies past the file's end.
        assert!(unsafe { zero_backed(map, 2 * page) }.is_err());
        // The fallback without /dev/zero: MADV_POPULATE_WRITE, where the kernel has it.
        // SAFETY: the first page of the mapping, inside the file.
        if unsafe { libc::madvise(map.cast(), page, libc::MADV_POPULATE_WRITE) } == 0 {
            assert_eq!(populate(map, page), Ok(()));
            assert!(populate(map, 2 * page).is_err());
        } else {
            eprintln!("MADV_POPULATE_WRITE is not supported by this kernel (Linux < 5.14)");
        }
        // SAFETY: the mapping made above, unmapped once.
        assert_eq!(unsafe { libc::munmap(map.cast(), 2 * page) }, 0);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn room_is_compared_with_the_whole_window() {
        let page = page_bytes();
        assert!(check_room(1 << 20, 2, (1 << 20) + 2 * page, "t").is_ok());
        let err = check_room(128 << 20, 2, 64 << 20, "t").unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NoMemory { .. }), "{err}");
        assert!(check_room(u64::MAX - 1, 4, u64::MAX - 2, "t").is_err());
        assert!(check_room(1, 1, u64::MAX, "t").is_ok());
    }
}
