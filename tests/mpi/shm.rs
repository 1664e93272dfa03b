//! The shared-memory segments jobs leave in `/dev/shm`.
//!
//! MPI should remove its segments when a job ends, but not every MPI in the matrix does: MPICH
//! 5.0.2 leaves `mpich_shm_*` (1 MiB a rank) after every job that aborts, as the `AbortWith`
//! programs do by design, and Open MPI 5.0.11 leaves a singleton's 16 MiB `sm_segment.*` after
//! every singleton run, clean or not (a C program that only calls `MPI_Init` and `MPI_Finalize`
//! too). `/dev/shm` is a tmpfs, so that was memory, about 280 MB a run of the suite, kept until
//! the machine restarted. After each run the harness removes the segments the run created, once
//! no process maps them.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

const DIR: &str = "/dev/shm";

/// Names the MPIs in the matrix give their segments.
const PREFIXES: &[&str] = &["mpich_shm_", "vader_segment.", "sm_segment."];

/// This user's MPI segments in `/dev/shm` now (none where there is no `/dev/shm`). Another
/// user's are never listed, so never removed.
pub fn segments() -> HashSet<OsString> {
    let (Ok(entries), Ok(me)) = (std::fs::read_dir(DIR), std::fs::metadata("/proc/self")) else {
        return HashSet::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == me.uid()))
        .map(|e| e.file_name())
        .filter(|name| {
            let name = name.to_string_lossy();
            PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .collect()
}

/// Removes the segments that are not in `before` and that no process maps, waiting up to a
/// second for the job's last processes to exit. Returns how many it removed.
pub fn remove_new(before: &HashSet<OsString>) -> usize {
    let mut left: Vec<OsString> = segments().difference(before).cloned().collect();
    let mut removed = 0;
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        let in_use = mapped();
        left.retain(|name| {
            if in_use.contains(name) {
                return true;
            }
            removed += usize::from(std::fs::remove_file(Path::new(DIR).join(name)).is_ok());
            false
        });
        std::thread::sleep(Duration::from_millis(50));
    }
    removed
}

/// The names of the `/dev/shm` files any process this user can see maps.
fn mapped() -> HashSet<OsString> {
    let mut names = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return names;
    };
    for p in procs.filter_map(|e| e.ok()) {
        let Ok(maps) = std::fs::read_to_string(p.path().join("maps")) else {
            continue;
        };
        for line in maps.lines() {
            if let Some(at) = line.find("/dev/shm/") {
                let name = line[at + "/dev/shm/".len()..].trim_end_matches(" (deleted)");
                names.insert(OsString::from(name));
            }
        }
    }
    names
}
