//! The flagship under the MPI launcher (`FERROMPI_MPIEXEC`, else the one of the MPI ferrompi was
//! built against): the same cuts and bounds at 1, 2, 3 and 4 ranks, a lower bound that never
//! decreases, convergence of the default instance, bad input that ends every rank promptly
//! with a clear message, and checkpoints that resume at any rank count bit for bit (written
//! at each of 1–4 ranks, resumed at each other), survive a failed write, or are refused on
//! every rank.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn launcher() -> Vec<String> {
    if let Ok(cmd) = std::env::var("FERROMPI_MPIEXEC") {
        return cmd.split_whitespace().map(String::from).collect();
    }
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    match ferrompi::IMPLEMENTATION {
        ferrompi::Implementation::OpenMpi => {
            let mpirun = if on_path("mpirun.openmpi") {
                "mpirun.openmpi"
            } else {
                "mpirun"
            };
            vec![mpirun.into(), "--oversubscribe".into()]
        }
        _ => vec![
            if on_path("mpiexec.mpich") {
                "mpiexec.mpich"
            } else {
                "mpiexec"
            }
            .into(),
        ],
    }
}

/// One MPI job at a time: libtest runs the tests on several threads, and jobs side by side
/// on a small machine would oversubscribe it and stretch the time limits.
static ONE_JOB: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the solver on `ranks` ranks with a time limit.
fn sddp(ranks: u32, args: &[&str], limit: Duration) -> (Output, Duration) {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let launch = launcher();
    let start = Instant::now();
    let out = Command::new("timeout")
        .arg(limit.as_secs().to_string())
        .args(&launch)
        .arg("-n")
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_sddp"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("the launcher starts");
    (out, start.elapsed())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The JSON line, parsed (serde_json): it must be valid JSON.
fn parsed(json: &str) -> serde_json::Value {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {json}"))
}

/// `key` of the JSON line, as JSON text (a string without its quotes).
fn field(json: &str, key: &str) -> String {
    let value = &parsed(json)[key];
    assert!(
        !value.is_null() || key == "exact_optimum",
        "{key} in {json}"
    );
    value
        .as_str()
        .map_or_else(|| value.to_string(), String::from)
}

/// `key` of the JSON line, a number.
fn number(json: &str, key: &str) -> f64 {
    parsed(json)[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number in {json}"))
}

/// A CSV row: (iteration, lower bound, upper mean).
type Row = (u32, f64, f64);

fn rows(stdout: &str) -> Vec<Row> {
    stdout
        .lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            (v.len() == 8).then_some(())?;
            Some((v[0].parse().ok()?, v[1].parse().ok()?, v[2].parse().ok()?))
        })
        .collect()
}

#[test]
fn same_cuts_and_bounds_at_every_rank_count() {
    let mut first: Option<(String, Vec<Row>)> = None;
    for ranks in 1..=4 {
        let (out, _) = sddp(
            ranks,
            &["--iterations", "5", "--csv", "--json"],
            Duration::from_secs(300),
        );
        let stdout = stdout_of(&out, &format!("{ranks} ranks"));
        let json = stdout.lines().last().unwrap().to_string();
        assert_eq!(field(&json, "ranks"), ranks.to_string());
        let rows = rows(&stdout);
        assert_eq!(rows.len(), 5, "{stdout}");
        for w in rows.windows(2) {
            assert!(
                w[1].1 >= w[0].1 - 1e-9 * w[0].1.abs(),
                "the lower bound decreased: {w:?}"
            );
        }
        match &first {
            None => first = Some((json, rows)),
            Some((json1, rows1)) => {
                for key in [
                    "lower_bound",
                    "upper_bound_mean",
                    "upper_bound_ci",
                    "gap",
                    "cuts",
                    "cut_digest",
                ] {
                    assert_eq!(
                        field(&json, key),
                        field(json1, key),
                        "{key} at {ranks} ranks"
                    );
                }
                for (a, b) in rows.iter().zip(rows1) {
                    assert!(
                        (a.1 - b.1).abs() <= 1e-9 * b.1.abs()
                            && (a.2 - b.2).abs() <= 1e-9 * b.2.abs()
                    );
                }
            }
        }
    }
}

#[test]
fn the_default_instance_converges() {
    let (out, _) = sddp(2, &["--json"], Duration::from_secs(600));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let json = stdout.lines().last().unwrap();
    assert_eq!(field(json, "converged"), "true", "{stdout}");
    assert_eq!(field(json, "stopped_by"), "statistical", "{stdout}");
    assert!(stdout.contains("stopped by statistical: "), "{stdout}");
    let num = |k| number(json, k);
    assert!(
        num("lower_bound") >= num("upper_bound_mean") - num("upper_bound_ci"),
        "{json}"
    );
    assert!(num("gap").abs() <= 0.05, "{json}");
    assert!(
        stdout.contains("memory per node:") && stdout.contains("% in MPI"),
        "{stdout}"
    );
}

#[test]
fn bad_input_ends_every_rank_promptly() {
    let file = std::env::temp_dir().join(format!("sddp-bad-{}.csv", std::process::id()));
    std::fs::write(&file, "1,2\n3,4\n5,6\n").unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--stages", "0"], "stages must be at least 1"),
        (&["--stages", "1000000000"], "stages must be at most 10000"),
        (
            &["--scenarios", "4611686018427387904"],
            "the scenario table of 12 stages × 4611686018427387904 scenarios",
        ),
        (
            &["--passes", "100000", "--iterations", "1000000"],
            "the cut pool of 12 stages × 1000000 iterations × 100000 passes",
        ),
        (&["--storage-max", "-5"], "storage capacity is -5"),
        (
            &["--scenario-file", file.to_str().unwrap()],
            "the scenario file has 3 rows",
        ),
    ];
    for (args, message) in cases {
        let (out, took) = sddp(3, args, Duration::from_secs(60));
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(took < Duration::from_secs(30), "{args:?} took {took:?}");
        for rank in 0..3 {
            assert!(
                stderr
                    .lines()
                    .any(|l| l.starts_with(&format!("sddp: rank {rank}:")) && l.contains(message)),
                "{args:?}: rank {rank} did not say '{message}':\n{stderr}"
            );
        }
    }
    let _ = std::fs::remove_file(file);
}

/// The command line under the launcher at 3 ranks: `--help` and `--version` print once and
/// every rank exits 0; a bad option or value prints one error with the usage and every rank
/// exits 2; `--opt=value` works.
#[test]
fn the_command_line_behaves_under_the_launcher() {
    let limit = Duration::from_secs(60);
    for (flag, says) in [
        ("--help", "Usage: sddp [OPTIONS]"),
        ("--version", "sddp 0.1.0"),
    ] {
        let (out, _) = sddp(3, &[flag], limit);
        let stdout = stdout_of(&out, flag);
        assert_eq!(
            stdout.matches(says).count(),
            1,
            "{flag} printed once:\n{stdout}"
        );
    }
    let (out, _) = sddp(3, &["--help"], limit);
    for option in [
        "--stop <STOP>",
        "--time-limit <SECONDS>",
        "--exact",
        "--checkpoint <PATH>",
    ] {
        assert!(text(&out.stdout).contains(option), "--help names {option}");
    }
    for (args, message) in [
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (
            &["--passes", "x"],
            "invalid value 'x' for '--passes <PASSES>'",
        ),
        (
            &["--passes", "1000000000"],
            "--passes must be at most 100000",
        ),
        (
            &["--stop", "never"],
            "invalid value 'never' for '--stop <STOP>'",
        ),
        (&["--tol", "-1"], "--tol must be at least 0"),
    ] {
        let (out, took) = sddp(3, args, limit);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}\n{stderr}",
            out.status
        );
        assert!(took < Duration::from_secs(30), "{args:?} took {took:?}");
        assert_eq!(
            stderr.matches(message).count(),
            1,
            "{args:?} said once:\n{stderr}"
        );
        assert_eq!(
            stderr.matches("Usage: sddp").count(),
            1,
            "{args:?} with the usage:\n{stderr}"
        );
    }
    let (out, _) = sddp(
        3,
        &["--iterations=2", "--stages=4", "--json", "--quiet"],
        limit,
    );
    let json = json_of(&out, "--opt=value");
    assert_eq!(field(&json, "iterations"), "2", "{json}");
    assert_eq!(field(&json, "stopped_by"), "iteration-limit", "{json}");
}

/// Small scenario trees solved whole as one LP (the deterministic equivalent, same solver):
/// the SDDP lower bound never exceeds its optimum, meets it to 1e-6 relative, and the upper
/// bound's 95 % interval contains it; at 1 and 3 ranks.
#[test]
fn the_lower_bound_meets_the_deterministic_equivalent() {
    let limit = Duration::from_secs(300);
    let trees = [
        "--stages 3 --scenarios 3 --reservoirs 1 --storage-max 40 --thermal-max 30",
        "--stages 4 --scenarios 4 --reservoirs 2 --storage-max 60",
        "--stages 5 --scenarios 3 --reservoirs 2 --thermal-max 40",
        "--stages 3 --scenarios 5 --reservoirs 1 --storage-max 50 --thermal-max 35 --seed 11",
    ];
    for tree in trees {
        for ranks in [1, 3] {
            let mut args: Vec<&str> = tree.split_whitespace().collect();
            args.extend([
                "--stop",
                "limit",
                "--iterations",
                "30",
                "--exact",
                "--csv",
                "--json",
            ]);
            let (out, _) = sddp(ranks, &args, limit);
            let json = json_of(&out, &format!("{tree} at {ranks} ranks"));
            let exact = number(&json, "exact_optimum");
            let lower = number(&json, "lower_bound");
            let what = format!("{tree} at {ranks} ranks: exact {exact}, {json}");
            for (iteration, bound, _) in rows(&text(&out.stdout)) {
                assert!(
                    bound <= exact + 1e-9 * exact.abs(),
                    "{what}: iteration {iteration}'s lower bound {bound} exceeds the optimum"
                );
            }
            assert!(
                (exact - lower).abs() <= 1e-6 * exact.abs(),
                "{what}: not met"
            );
            let (mean, ci) = (
                number(&json, "upper_bound_mean"),
                number(&json, "upper_bound_ci"),
            );
            assert!(
                (mean - exact).abs() <= ci + 1e-9 * exact.abs(),
                "{what}: the upper bound's interval {mean} ± {ci} misses the optimum"
            );
        }
    }
}

/// The JSON line of a run that must have succeeded.
fn json_of(out: &Output, what: &str) -> String {
    stdout_of(out, what).lines().last().unwrap().to_string()
}

/// The output of a run that must have succeeded.
fn stdout_of(out: &Output, what: &str) -> String {
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: {}\n{stdout}{}",
        out.status,
        text(&out.stderr)
    );
    stdout
}

/// Every one of `ranks` ranks ended the run with `message`.
fn every_rank_says(out: &Output, ranks: u32, message: &str, what: &str) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{what} succeeded");
    for rank in 0..ranks {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("sddp: rank {rank}:")) && l.contains(message)),
            "{what}: rank {rank} did not say '{message}':\n{stderr}"
        );
    }
}

#[test]
fn checkpoints_resume_bit_for_bit_at_every_rank_count() {
    let dir = std::env::temp_dir().join(format!("sddp-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ck = dir.join("run.ckpt");
    let tmp = dir.join("run.ckpt.tmp");
    let ck_arg = ck.to_str().unwrap();
    let limit = Duration::from_secs(300);
    let same = |json: &str, whole: &str, what: &str| {
        for key in [
            "iterations",
            "lower_bound",
            "upper_bound_mean",
            "upper_bound_ci",
            "gap",
            "cuts",
            "cut_digest",
        ] {
            assert_eq!(field(json, key), field(whole, key), "{key}: {what}");
        }
    };
    let (out, _) = sddp(4, &["--iterations", "6", "--json"], limit);
    let whole = json_of(&out, "the run never stopped");
    // Written at every rank count after iterations 2 and 3 (every 2, and at the limit), and
    // resumed at every other.
    for writers in 1..=4u32 {
        let file = dir.join(format!("run-{writers}.ckpt"));
        let file_arg = file.to_str().unwrap();
        let args = [
            "--iterations",
            "3",
            "--checkpoint",
            file_arg,
            "--checkpoint-every",
            "2",
            "--json",
        ];
        let (out, _) = sddp(writers, &args, limit);
        let json = json_of(&out, &format!("checkpointed at {writers} ranks"));
        assert_eq!(field(&json, "checkpoints"), "2", "{json}");
        for ranks in (1..=4).filter(|&r| r != writers) {
            let (out, _) = sddp(
                ranks,
                &["--iterations", "6", "--resume", file_arg, "--json"],
                limit,
            );
            let what = format!("written at {writers} ranks, resumed at {ranks}");
            same(&json_of(&out, &what), &whole, &what);
        }
    }
    std::fs::rename(dir.join("run-4.ckpt"), &ck).unwrap();
    assert!(!tmp.exists());
    // What a run killed while writing leaves: ignored by a resume, replaced by the next write.
    std::fs::write(&tmp, b"half a checkpoint").unwrap();
    let args = [
        "--iterations",
        "4",
        "--resume",
        ck_arg,
        "--checkpoint",
        ck_arg,
    ];
    let (out, _) = sddp(2, &args, limit);
    json_of(&out, "resumed and checkpointed again");
    assert!(!tmp.exists(), "the next checkpoint replaced the leftover");
    // A checkpoint that cannot be written ends the run on every rank and leaves the last one.
    std::fs::create_dir(&tmp).unwrap();
    let args = [
        "--iterations",
        "5",
        "--resume",
        ck_arg,
        "--checkpoint",
        ck_arg,
    ];
    let (out, _) = sddp(3, &args, limit);
    every_rank_says(
        &out,
        3,
        "run.ckpt.tmp",
        "a checkpoint that cannot be written",
    );
    std::fs::remove_dir(&tmp).unwrap();
    let (out, _) = sddp(
        3,
        &["--iterations", "6", "--resume", ck_arg, "--json"],
        limit,
    );
    same(
        &json_of(&out, "resumed after a failed write"),
        &whole,
        "resumed after a failed write",
    );

    // Refused on every rank: damaged, cut short, of another instance, not a checkpoint.
    let good = std::fs::read(&ck).unwrap();
    let flipped = |at: usize| {
        let mut bytes = good.clone();
        bytes[at] ^= 0x10;
        bytes
    };
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "a byte flipped in the cuts",
            flipped(good.len() - 100),
            "its body's CRC-32",
        ),
        (
            "a byte flipped in the header",
            flipped(20),
            "its header's CRC-32",
        ),
        (
            "cut short",
            good[..good.len() - 64].to_vec(),
            "is truncated",
        ),
        (
            "shorter than a header",
            good[..50].to_vec(),
            "shorter than a header",
        ),
        (
            "not a checkpoint",
            vec![b'x'; 4096],
            "is not an sddp checkpoint",
        ),
    ];
    let bad = dir.join("bad.ckpt");
    let bad_arg = bad.to_str().unwrap();
    for (what, bytes, message) in cases {
        std::fs::write(&bad, bytes).unwrap();
        let (out, took) = sddp(3, &["--iterations", "6", "--resume", bad_arg], limit);
        every_rank_says(&out, 3, message, what);
        assert!(took < Duration::from_secs(60), "{what} took {took:?}");
    }
    let (out, _) = sddp(3, &["--stages", "10", "--resume", ck_arg], limit);
    every_rank_says(
        &out,
        3,
        "of another instance: --stages 12 there, 10 here",
        "another instance",
    );
    let (out, _) = sddp(3, &["--iterations", "2", "--resume", ck_arg], limit);
    every_rank_says(
        &out,
        3,
        "--iterations must be at least 4",
        "too few iterations",
    );
    let missing = dir.join("missing.ckpt");
    let (out, _) = sddp(2, &["--resume", missing.to_str().unwrap()], limit);
    every_rank_says(&out, 2, "NoSuchFile", "a missing checkpoint");
    let _ = std::fs::remove_dir_all(&dir);
}
