//! Request futures under two executors (futures' block_on and tokio's current-thread runtime):
//! many concurrent receives driven by one executor, owned and persistent futures, and proof that
//! they cost one progress thread in total, not one each; at `Single` (program `async_single`), none.

use crate::checks::Checks;
use crate::values::values;
use ferrompi::{Mpi, scope};
use futures::future::join_all;

const CONCURRENT: usize = 200;

pub(super) fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Whether ferrompi's progress thread runs in this process (by its name; Linux cuts names to
/// 15 bytes).
pub(super) fn progress_thread_runs() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| {
        tasks.filter_map(Result::ok).any(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with("ferrompi-progre"))
        })
    })
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let threads_before = threads_of_this_process();

    // Many concurrent scoped receives, awaited together by futures' block_on.
    let out: Vec<Vec<u32>> = (0..CONCURRENT)
        .map(|i| values(rank as u64 * 1000 + i as u64, 16))
        .collect();
    let mut inboxes = vec![vec![0u32; 16]; CONCURRENT];
    let results = scope(|s| {
        let mut recvs = Vec::new();
        for (i, buf) in inboxes.iter_mut().enumerate() {
            recvs.push(world.irecv(s, buf, prev, i as i32).expect("irecv"));
        }
        // Sends in reverse order, so receives complete out of order.
        let sends: Vec<_> = out
            .iter()
            .enumerate()
            .rev()
            .map(|(i, b)| world.isend(s, b, next, i as i32).expect("isend"))
            .collect();
        let results = futures::executor::block_on(async { join_all(recvs).await });
        for send in sends {
            send.wait().expect("send");
        }
        results
    });
    for (i, result) in results.into_iter().enumerate() {
        let status = t.okay(result, "awaited receive");
        t.eq(status.tag(), i as i32, "awaited status");
        t.eq(
            &inboxes[i],
            &values::<u32>(prev as u64 * 1000 + i as u64, 16),
            "awaited content",
        );
    }
    let threads_after = threads_of_this_process();
    // At Single the process promised MPI one thread: the crate starts none (futures re-poll at
    // once instead); at the other levels one ticker serves every future (started only once a
    // future was pending, which a 1-rank run may never see).
    let single = mpi.thread_level() == ferrompi::ThreadLevel::Single;
    t.ok(
        !(single && progress_thread_runs()),
        format!("no progress thread at Single ({:?})", mpi.thread_level()),
    );
    if single {
        t.eq(
            threads_of_this_process(),
            threads_before,
            "no thread started at Single",
        );
    }
    t.ok(
        threads_after <= threads_before + 1,
        format!("{CONCURRENT} futures cost at most one progress thread ({threads_before} -> {threads_after} threads)"),
    );

    // Owned futures under tokio's current-thread runtime.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    let (inbox, status) = runtime.block_on(async {
        let recv = world
            .irecv_owned(vec![0i16; 100], prev, 7)
            .expect("irecv_owned");
        let send = world
            .isend_owned(vec![rank as i16; 100], next, 7)
            .expect("isend_owned");
        let ((sent, sent_status), received) = futures::future::join(send, recv).await;
        sent_status.expect("send");
        assert_eq!(sent, vec![rank as i16; 100]);
        received
    });
    t.okay(status, "owned future");
    t.eq(
        inbox,
        vec![prev as i16; 100],
        "owned future content under tokio",
    );

    // A persistent receive awaited repeatedly.
    let mut recv = t.okay(world.recv_init(vec![0u8; 8], prev, 9), "recv_init");
    let mut send = t.okay(world.send_init(vec![0u8; 8], next, 9), "send_init");
    for iteration in 0..20u8 {
        send.buffer_mut().fill(iteration ^ rank as u8);
        let r = t.okay(recv.start(), "start recv");
        let s = t.okay(send.start(), "start send");
        let (a, b) = futures::executor::block_on(async { futures::future::join(s, r).await });
        t.okay(a, "awaited persistent send");
        t.okay(b, "awaited persistent recv");
        t.eq(
            recv.buffer(),
            &[iteration ^ prev as u8; 8][..],
            "awaited persistent content",
        );
    }

    // A future for a message that arrives later: pending at first, then woken by the ticker.
    let mut late = [0u64; 1];
    scope(|s| {
        let mut r = t.okay(world.irecv(s, &mut late, prev, 11), "irecv late");
        t.ok_with(r.test(), |v| v.is_none(), "nothing sent yet");
        t.okay(world.barrier(), "barrier");
        let w = t.okay(world.isend(s, &[42u64], next, 11), "isend late");
        let status = futures::executor::block_on(r);
        t.okay(status, "late receive awaited");
        t.okay(w.wait(), "late send");
    });
    t.eq(late, [42], "late content");
}
