//! Pure parsing logic of the build-time MPI probe.
//!
//! Included by `build.rs` and by `tests/build_probe.rs` (so it gets ordinary unit tests); it
//! runs no commands itself.

use std::path::PathBuf;

/// What a compiler wrapper or pkg-config says is needed to compile and link against MPI.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MpiFlags {
    /// `-I` directories.
    pub include_dirs: Vec<PathBuf>,
    /// `-D`/`-U` preprocessor flags, verbatim.
    pub defines: Vec<String>,
    /// `-L` directories.
    pub lib_dirs: Vec<PathBuf>,
    /// `-l` library names.
    pub libs: Vec<String>,
    /// Flags for the linker: `-Wl,...`, `-pthread`, full paths to libraries.
    pub link_args: Vec<String>,
}

/// Why a line could not be split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitError {
    /// A `'` or `"` that is never closed.
    UnterminatedQuote,
    /// A trailing `\` with nothing to escape.
    TrailingBackslash,
}

/// Splits a command line into words as a POSIX shell would (quotes and backslashes; no
/// expansion), so that paths with spaces survive.
pub fn shell_split(line: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' => {
                let next = chars.next().ok_or(SplitError::TrailingBackslash)?;
                // A backslash-newline is a line continuation.
                if next != '\n' {
                    word.push(next);
                    in_word = true;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err(SplitError::UnterminatedQuote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return Err(SplitError::UnterminatedQuote),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err(SplitError::UnterminatedQuote),
                    }
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Classifies compiler/linker words (from `mpicc -show` or `pkg-config --cflags --libs`).
///
/// `skip_first` drops the compiler's own name (the first word of `mpicc -show`).
pub fn classify(words: &[String], skip_first: bool) -> MpiFlags {
    let mut flags = MpiFlags::default();
    let mut iter = words.iter().skip(usize::from(skip_first)).peekable();
    while let Some(word) = iter.next() {
        // Flags that take their value either attached (`-I/x`) or as the next word (`-I /x`).
        let mut value_of = |prefix: &str| -> Option<String> {
            let rest = word.strip_prefix(prefix)?;
            if rest.is_empty() {
                iter.next().cloned()
            } else {
                Some(rest.to_string())
            }
        };
        if let Some(dir) = value_of("-I") {
            flags.include_dirs.push(PathBuf::from(dir));
        } else if let Some(dir) = value_of("-L") {
            flags.lib_dirs.push(PathBuf::from(dir));
        } else if let Some(lib) = value_of("-l") {
            flags.libs.push(lib);
        } else if word.starts_with("-D") || word.starts_with("-U") {
            flags.defines.push(word.clone());
        } else if word.starts_with("-Wl,") || word == "-pthread" {
            flags.link_args.push(word.clone());
        } else if word == "-Xlinker" {
            if let Some(arg) = iter.next() {
                flags.link_args.push(format!("-Wl,{arg}"));
            }
        } else if !word.starts_with('-')
            && (word.ends_with(".so") || word.contains(".so.") || word.ends_with(".a"))
        {
            flags.link_args.push(word.clone());
        }
        // Anything else (-O2, -f..., -std=...) is a compiler option for the user's own C code.
    }
    flags
}

/// The MPI family a header belongs to, read from the generated bindings' text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Open MPI (defines `OPEN_MPI`).
    OpenMpi,
    /// MPICH and its derivatives (defines `MPICH_VERSION`).
    Mpich,
    /// The MPI-5 standard ABI (`mpi_abi.h`, defines `MPI_ABI_VERSION`): the library is chosen
    /// when the program runs.
    StandardAbi,
    /// Anything else.
    Other,
}

impl Family {
    /// The value of the `ferrompi_family` cfg.
    pub fn cfg_value(self) -> &'static str {
        match self {
            Family::OpenMpi => "openmpi",
            Family::Mpich => "mpich",
            Family::StandardAbi => "abi",
            Family::Other => "other",
        }
    }
}

/// Facts about the installed MPI, read from the bindings bindgen generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// Implementation family.
    pub family: Family,
    /// `(MPI_VERSION, MPI_SUBVERSION)`.
    pub version: (u32, u32),
    /// `MPI_Allreduce_init` and the other MPI-4 persistent collectives are declared.
    pub persistent_collectives: bool,
    /// Open MPI's `MPIX_Allreduce_init` (`pcollreq` extension) is declared.
    pub mpix_persistent_collectives: bool,
    /// MPI-4 large-count `_c` functions (`MPI_Send_c`) are declared.
    pub large_count: bool,
    /// `MPI_C_BOOL` is available.
    pub c_bool: bool,
    /// MPI-4's `MPI_Isendrecv` and `MPI_Isendrecv_replace` are declared.
    pub isendrecv: bool,
    /// MPI-4's `MPI_COMM_TYPE_HW_GUIDED` split type is defined.
    pub hw_guided: bool,
    /// Open MPI's `OMPI_COMM_TYPE_NUMA` and the other `OMPI_COMM_TYPE_*` split types are defined.
    pub ompi_comm_types: bool,
}

/// Reads the value of `pub const NAME: T = VALUE;` from bindgen output.
fn const_value(bindings: &str, name: &str) -> Option<i64> {
    let needle = format!("pub const {name}:");
    let line = bindings
        .lines()
        .find(|l| l.trim_start().starts_with(&needle))?;
    let value = line.split('=').nth(1)?.trim().trim_end_matches(';').trim();
    value.parse().ok()
}

fn declares_fn(bindings: &str, name: &str) -> bool {
    bindings.contains(&format!("pub fn {name}("))
}

/// Reads the capabilities of the installed MPI from the bindgen output.
pub fn capabilities(bindings: &str) -> Result<Capabilities, String> {
    let family = if bindings.contains("pub const MPI_ABI_VERSION:") {
        Family::StandardAbi
    } else if bindings.contains("pub const OPEN_MPI:") {
        Family::OpenMpi
    } else if bindings.contains("pub const MPICH_VERSION:") {
        Family::Mpich
    } else {
        Family::Other
    };
    let major = const_value(bindings, "MPI_VERSION").ok_or("mpi.h defines no MPI_VERSION")?;
    let minor = const_value(bindings, "MPI_SUBVERSION").ok_or("mpi.h defines no MPI_SUBVERSION")?;
    let to_u32 =
        |v: i64| u32::try_from(v).map_err(|_| format!("MPI version number {v} out of range"));
    Ok(Capabilities {
        family,
        version: (to_u32(major)?, to_u32(minor)?),
        persistent_collectives: declares_fn(bindings, "MPI_Allreduce_init"),
        mpix_persistent_collectives: declares_fn(bindings, "MPIX_Allreduce_init"),
        large_count: declares_fn(bindings, "MPI_Send_c"),
        c_bool: bindings.contains("pub static ferrompi_MPI_C_BOOL:"),
        isendrecv: declares_fn(bindings, "MPI_Isendrecv")
            && declares_fn(bindings, "MPI_Isendrecv_replace"),
        hw_guided: bindings.contains("pub const MPI_COMM_TYPE_HW_GUIDED:"),
        ompi_comm_types: bindings.contains("pub const OMPI_COMM_TYPE_NUMA:"),
    })
}

/// Gives the constants of anonymous C enums the type C gives them, `int` (C11 §6.4.4.3).
/// bindgen types them by the enum's underlying type, `unsigned int` when no value is negative,
/// which the MPI-5 ABI header's `enum { MPI_SUCCESS = 0, … }` blocks hit.
#[cfg_attr(not(feature = "bindgen"), allow(dead_code))] // only bindgen output needs it
pub fn anonymous_enums_as_c_int(bindings: &str) -> String {
    let mut out = String::with_capacity(bindings.len());
    for line in bindings.split_inclusive('\n') {
        let trimmed = line.trim_start();
        match trimmed.strip_suffix('\n').unwrap_or(trimmed) {
            alias if alias.starts_with("pub type _bindgen_ty_") && alias.ends_with("c_uint;") => {
                out.push_str(&line.replacen("c_uint;", "c_int;", 1));
            }
            _ => out.push_str(line),
        }
    }
    out
}
