//! Assertions for multi-rank programs, counted so the driver can tell a program that checked
//! something from one that ran nothing.
//!
//! A failed check panics; ferrompi's panic hook then aborts the whole job, so no rank is left
//! waiting and the driver sees the message.

use std::fmt::{Debug, Display};

const MARKER: &str = "ferrompi-checks";

/// Counts and runs one rank's checks.
pub struct Checks {
    program: &'static str,
    rank: i32,
    size: i32,
    count: u32,
}

impl Checks {
    pub fn new(program: &'static str, rank: i32, size: i32) -> Checks {
        Checks {
            program,
            rank,
            size,
            count: 0,
        }
    }

    pub fn rank(&self) -> i32 {
        self.rank
    }

    pub fn size(&self) -> i32 {
        self.size
    }

    /// Checks that `condition` holds.
    #[track_caller]
    pub fn ok(&mut self, condition: bool, what: impl Display) {
        self.count += 1;
        if !condition {
            panic!(
                "[{} rank {}/{}] check failed: {what}",
                self.program, self.rank, self.size
            );
        }
    }

    /// Checks that `got == want`.
    #[track_caller]
    pub fn eq<T: PartialEq + Debug>(&mut self, got: T, want: T, what: impl Display) {
        self.count += 1;
        if got != want {
            panic!(
                "[{} rank {}/{}] check failed: {what}: got {got:?}, want {want:?}",
                self.program, self.rank, self.size
            );
        }
    }

    /// Checks that `result` is `Ok`, returning the value.
    #[track_caller]
    pub fn okay<T, E: Debug>(&mut self, result: Result<T, E>, what: impl Display) -> T {
        self.count += 1;
        match result {
            Ok(value) => value,
            Err(e) => panic!(
                "[{} rank {}/{}] {what} failed: {e:?}",
                self.program, self.rank, self.size
            ),
        }
    }

    /// Checks that `result` is `Ok(want)`.
    #[track_caller]
    pub fn eq_ok<T: PartialEq + Debug, E: Debug>(
        &mut self,
        result: Result<T, E>,
        want: T,
        what: impl Display,
    ) {
        let got = self.okay(result, &what);
        self.eq(got, want, what);
    }

    /// Checks that `result` is `Ok` with a value satisfying `holds`.
    #[track_caller]
    pub fn ok_with<T: Debug, E: Debug>(
        &mut self,
        result: Result<T, E>,
        holds: impl FnOnce(&T) -> bool,
        what: impl Display,
    ) {
        let value = self.okay(result, &what);
        let good = holds(&value);
        self.ok(good, format!("{what}: {value:?}"));
    }

    /// Checks that `result` is an error matching `matches`.
    #[track_caller]
    pub fn err<T: Debug, E: Debug>(
        &mut self,
        result: Result<T, E>,
        matches: impl Fn(&E) -> bool,
        what: impl Display,
    ) {
        self.count += 1;
        match result {
            Err(ref e) if matches(e) => {}
            other => panic!(
                "[{} rank {}/{}] {what}: expected a specific error, got {other:?}",
                self.program, self.rank, self.size
            ),
        }
    }

    /// Checks that a receive of a message longer than its buffer failed with the truncation
    /// class. Open MPI 4.1 does not report truncation of messages a process sends to itself (its
    /// `self` transport copies what fits and returns success; a C program shows the same), so for
    /// those `Ok` with a full buffer is accepted there.
    #[track_caller]
    pub fn truncated(
        &mut self,
        result: ferrompi::Result<ferrompi::Status>,
        to_self: bool,
        what: impl Display,
    ) {
        let lenient = to_self && ferrompi::IMPLEMENTATION == ferrompi::Implementation::OpenMpi;
        match result {
            Ok(_) if lenient => self.count += 1,
            result => self.err(
                result,
                |e| e.class() == Some(ferrompi::ErrorClass::Truncate),
                what,
            ),
        }
    }

    /// Prints this rank's report line for the driver.
    pub fn report(&self) {
        println!(
            "{MARKER} program={} rank={} checks={}",
            self.program, self.rank, self.count
        );
    }
}

/// Parses the report lines of `program` from a run's output: `(rank, checks)` pairs.
pub fn parse_reports(output: &str, program: &str) -> Vec<(u32, u32)> {
    output
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix(MARKER)?;
            let mut fields = rest.split_whitespace();
            let name = fields.next()?.strip_prefix("program=")?;
            let rank = fields.next()?.strip_prefix("rank=")?.parse().ok()?;
            let checks = fields.next()?.strip_prefix("checks=")?.parse().ok()?;
            (name == program).then_some((rank, checks))
        })
        .collect()
}
