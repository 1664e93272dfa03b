//! Request futures in a process at its thread limit (a cgroup's `pids.max`, `ulimit -u`): the
//! progress ticker cannot start, and a pending future falls back to waking its task at once,
//! as at `Single`, instead of panicking in `poll` (which would end the job).
//!
//! The limit is a cgroup of this rank alone under the v1 `pids` controller, with `pids.max`
//! at the threads the process has, entered before any future is pending (the ticker starts
//! on the first) and left before finalize. Where that controller is not writable (not root, a
//! cgroup-v2-only machine) the program says so on stderr and checks only the futures.

use super::async_p2p::{progress_thread_runs, threads_of_this_process};
use crate::checks::Checks;
use crate::values::values;
use ferrompi::Mpi;
use std::path::PathBuf;
use std::task::Poll;

/// This process in a `pids` cgroup of its own that allows no more threads than it has; dropped,
/// the process goes back to its cgroup and the new one is removed.
struct ThreadLimit {
    dir: PathBuf,
    parent: PathBuf,
}

impl ThreadLimit {
    fn enter() -> Option<ThreadLimit> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let current = cgroups
            .lines()
            .find_map(|line| line.split_once(":pids:").map(|(_, path)| path.to_owned()))?;
        let parent = PathBuf::from("/sys/fs/cgroup/pids").join(current.trim_start_matches('/'));
        // Those a rank that failed here left behind (its process gone, so they are empty).
        for entry in std::fs::read_dir(&parent).ok()?.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("ferrompi-test-")
                && !std::path::Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
        let dir = parent.join(format!("ferrompi-test-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let limit = ThreadLimit { dir, parent };
        let threads = threads_of_this_process().to_string();
        std::fs::write(limit.dir.join("pids.max"), threads).ok()?;
        std::fs::write(
            limit.dir.join("cgroup.procs"),
            std::process::id().to_string(),
        )
        .ok()?;
        Some(limit)
    }
}

impl Drop for ThreadLimit {
    fn drop(&mut self) {
        let pid = std::process::id().to_string();
        let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    t.ok(
        !progress_thread_runs(),
        "no ticker before the first pending future",
    );
    let limit = ThreadLimit::enter();
    match &limit {
        Some(_) => t.ok(
            std::thread::Builder::new().spawn(|| {}).is_err(),
            "at the limit no thread starts",
        ),
        None => eprintln!(
            "async_thread_limit: no writable cgroup-v1 pids controller here; futures only"
        ),
    }

    // A receive that is pending when first polled (the send comes after a yield), awaited
    // with the send in one executor on this thread.
    let recv = t.okay(world.irecv_owned(vec![0u32; 64], prev, 7), "irecv_owned");
    let send = async {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if std::mem::replace(&mut yielded, true) {
                Poll::Ready(())
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await;
        let out = values::<u32>(rank as u64, 64);
        world.isend_owned(out, next, 7).expect("isend_owned").await
    };
    let ((got, received), (_, sent)) =
        futures::executor::block_on(futures::future::join(recv, send));
    t.okay(received, "the receive, awaited at the limit");
    t.okay(sent, "the send, awaited at the limit");
    t.eq(got, values::<u32>(prev as u64, 64), "the content");
    if limit.is_some() {
        t.ok(!progress_thread_runs(), "no ticker at the limit");
    }
    drop(limit);
    t.okay(world.barrier(), "barrier after leaving the limit");
}
