//! What the drill programs (`fault_drill`, `soak`, `thread_drill`, `input_drill`) share: their
//! settings from the environment, and a failed check as an `Error` that ends the job.

use ferrompi::{Error, ErrorKind};

/// The value of the environment variable `name`, or `default` when it is not set. A value that
/// does not parse stops the program with a message naming the variable: a drill that ran with
/// a setting other than the one asked for would report the wrong thing.
pub fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text}: not a value this drill takes")),
        Err(_) => default,
    }
}

/// A drill's failed check, as an error: returned from `main`, it ends the job with its line.
pub fn failed(drill: &'static str, what: String) -> Error {
    ErrorKind::InvalidArgument {
        operation: drill,
        reason: what,
    }
    .into()
}
