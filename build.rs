//! Finds MPI, generates `ffi` bindings with bindgen, evaluates the handle macros into Rust
//! `const`s, compiles the constants shim and emits `cfg`s describing what the installed MPI
//! offers.
//!
//! Probe order (the first that is set or found wins; an override that fails is an error, not a
//! fallback): `MPICC`, `MPI_PKG_CONFIG`, `MPI_INCLUDE_DIR` + `MPI_LIB_DIR` (+ `MPI_LIBS`), then
//! `mpicc -show` / `mpicc --showme` from `PATH`, then pkg-config `ompi` and `mpich`.
//!
//! Bindings (`FERROMPI_BINDINGS`): `auto` (the default) runs bindgen and, when it cannot load
//! libclang, falls back to the set kept in `build/bindings/` for the header's ABI family,
//! verified against the installed `mpi.h` by static assertions the C compiler evaluates;
//! `bindgen` never falls back; `pregenerated` never runs bindgen. Without the crate's `bindgen`
//! feature (on by default) bindgen is not even compiled and `auto` means the kept bindings.
//!
//! `DOCS_RS` set (docs.rs, or `DOCS_RS=1 cargo doc` anywhere): no MPI is looked for and nothing
//! is compiled or linked; the docs are built against the kept `mpich-4` set (MPI 4.0, the
//! fullest API; the public API is the same on every MPI).

#[path = "build/handles.rs"]
mod handles;
#[path = "build/pregenerated.rs"]
mod pregenerated;
#[path = "build/probe.rs"]
mod probe;

use probe::{Capabilities, MpiFlags};
use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables the probe reads; each gets a `rerun-if-env-changed`.
const ENV_VARS: &[&str] = &[
    "MPICC",
    "MPI_PKG_CONFIG",
    "MPI_INCLUDE_DIR",
    "MPI_LIB_DIR",
    "MPI_LIBS",
    "PATH",
    "PKG_CONFIG_PATH",
    "LIBCLANG_PATH",
    "CLANG_PATH",
    "BINDGEN_EXTRA_CLANG_ARGS",
    "FERROMPI_BINDINGS",
    "DOCS_RS",
];

/// The kept set the docs are built against when `DOCS_RS` is set.
const DOCS_SET: &str = "mpich-4";

/// Handle constants that `mpi.h` defines as macros bindgen cannot evaluate (casts in MPICH,
/// addresses of globals in Open MPI). Each becomes a Rust `const` of the same name in `ffi`
/// (`write_handles`), and the shim also defines it as a linkable `const` object
/// (`ferrompi_MPI_*`), against which a unit test checks the Rust one.
/// `(C type, name, required)`: optional ones are guarded by `#ifdef`.
const HANDLE_CONSTANTS: &[(&str, &str, bool)] = &[
    ("MPI_Comm", "MPI_COMM_WORLD", true),
    ("MPI_Comm", "MPI_COMM_SELF", true),
    ("MPI_Comm", "MPI_COMM_NULL", true),
    ("MPI_Group", "MPI_GROUP_NULL", true),
    ("MPI_Group", "MPI_GROUP_EMPTY", true),
    ("MPI_Errhandler", "MPI_ERRORS_RETURN", true),
    ("MPI_Errhandler", "MPI_ERRORS_ARE_FATAL", true),
    ("MPI_Errhandler", "MPI_ERRHANDLER_NULL", true),
    ("MPI_Request", "MPI_REQUEST_NULL", true),
    ("MPI_Info", "MPI_INFO_NULL", true),
    ("MPI_Win", "MPI_WIN_NULL", true),
    ("MPI_File", "MPI_FILE_NULL", true),
    ("MPI_Message", "MPI_MESSAGE_NULL", true),
    ("MPI_Message", "MPI_MESSAGE_NO_PROC", true),
    ("MPI_Op", "MPI_OP_NULL", true),
    ("MPI_Op", "MPI_MAX", true),
    ("MPI_Op", "MPI_MIN", true),
    ("MPI_Op", "MPI_SUM", true),
    ("MPI_Op", "MPI_PROD", true),
    ("MPI_Op", "MPI_LAND", true),
    ("MPI_Op", "MPI_BAND", true),
    ("MPI_Op", "MPI_LOR", true),
    ("MPI_Op", "MPI_BOR", true),
    ("MPI_Op", "MPI_LXOR", true),
    ("MPI_Op", "MPI_BXOR", true),
    ("MPI_Op", "MPI_MINLOC", true),
    ("MPI_Op", "MPI_MAXLOC", true),
    ("MPI_Op", "MPI_REPLACE", true),
    ("MPI_Op", "MPI_NO_OP", true),
    ("MPI_Datatype", "MPI_DATATYPE_NULL", true),
    ("MPI_Datatype", "MPI_BYTE", true),
    ("MPI_Datatype", "MPI_PACKED", true),
    ("MPI_Datatype", "MPI_CHAR", true),
    ("MPI_Datatype", "MPI_INT8_T", true),
    ("MPI_Datatype", "MPI_INT16_T", true),
    ("MPI_Datatype", "MPI_INT32_T", true),
    ("MPI_Datatype", "MPI_INT64_T", true),
    ("MPI_Datatype", "MPI_UINT8_T", true),
    ("MPI_Datatype", "MPI_UINT16_T", true),
    ("MPI_Datatype", "MPI_UINT32_T", true),
    ("MPI_Datatype", "MPI_UINT64_T", true),
    ("MPI_Datatype", "MPI_FLOAT", true),
    ("MPI_Datatype", "MPI_DOUBLE", true),
    ("MPI_Datatype", "MPI_AINT", true),
    ("MPI_Datatype", "MPI_COUNT", true),
    ("MPI_Datatype", "MPI_2INT", true),
    ("MPI_Datatype", "MPI_FLOAT_INT", true),
    ("MPI_Datatype", "MPI_DOUBLE_INT", true),
    ("MPI_Datatype", "MPI_LONG_INT", true),
    ("MPI_Datatype", "MPI_C_BOOL", false),
    ("MPI_Datatype", "MPI_C_FLOAT_COMPLEX", false),
    ("MPI_Datatype", "MPI_C_DOUBLE_COMPLEX", false),
    ("void *", "MPI_IN_PLACE", true),
    ("void *", "MPI_BOTTOM", true),
    // Macros in Open MPI and the MPI-5 ABI; `extern int * const` objects in MPICH, which
    // bindgen declares itself.
    ("int *", "MPI_UNWEIGHTED", false),
    ("int *", "MPI_WEIGHTS_EMPTY", false),
    ("MPI_Status *", "MPI_STATUS_IGNORE", true),
    ("MPI_Status *", "MPI_STATUSES_IGNORE", true),
];

fn main() {
    for var in ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/probe.rs");
    println!("cargo:rerun-if-changed=build/handles.rs");
    println!("cargo:rerun-if-changed=build/pregenerated.rs");
    println!("cargo:rerun-if-changed=build/bindings");

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if env::var_os("DOCS_RS").is_some() {
        let bindings = read_set(DOCS_SET);
        write_if_changed(&out_dir.join("bindings.rs"), &bindings);
        let names: Vec<(&str, &str)> = shim_names().map(|(ty, name, _)| (ty, name)).collect();
        let module = handles::placeholder_module(&names, &bindings)
            .unwrap_or_else(|why| panic!("ferrompi: the kept bindings: {why}"));
        write_if_changed(&out_dir.join("handles.rs"), &module);
        let caps = probe::capabilities(&bindings).expect("the kept bindings are complete");
        emit_cfgs(
            &caps,
            &format!("DOCS_RS: documentation only, against build/bindings/{DOCS_SET}.rs"),
        );
        return;
    }
    let (flags, source) = match find_mpi() {
        Ok(found) => found,
        Err(tried) => fail_not_found(&tried),
    };
    write_shim(&out_dir);
    let macros = header_macros(&out_dir, &flags, &source);
    let (bindings, origin) = bindings(&out_dir, &flags, &macros, &source);
    let caps = match probe::capabilities(&bindings) {
        Ok(caps) => caps,
        Err(why) => panic!("ferrompi: the MPI found via {source} is not usable: {why}"),
    };
    write_handles(&out_dir, &flags, &bindings, &source);
    compile_shim(&out_dir, &flags);
    compile_bench_reference(&out_dir, &flags, &source, &caps);
    emit_link(&flags);
    emit_cfgs(&caps, &format!("{source}{origin}"));
}

/// How the build makes its bindings (`FERROMPI_BINDINGS`).
#[derive(Clone, PartialEq, Eq)]
enum BindingsMode {
    Auto,
    Bindgen,
    Pregenerated,
    /// One named kept set, whatever the header: how the tests show a mismatch is caught.
    Set(String),
}

fn bindings_mode() -> BindingsMode {
    match env::var("FERROMPI_BINDINGS").as_deref() {
        Err(_) | Ok("" | "auto") => BindingsMode::Auto,
        Ok("bindgen") => BindingsMode::Bindgen,
        Ok("pregenerated") => BindingsMode::Pregenerated,
        Ok(set) if pregenerated::SETS.contains(&set) => BindingsMode::Set(set.to_string()),
        Ok(other) => panic!(
            "ferrompi: FERROMPI_BINDINGS={other:?} is not one of auto, bindgen, pregenerated, {}",
            pregenerated::SETS.join(", ")
        ),
    }
}

/// The bindings' text and, for the probe string, where they came from ("" for bindgen).
fn bindings(
    out_dir: &Path,
    flags: &MpiFlags,
    macros: &BTreeMap<String, String>,
    source: &str,
) -> (String, String) {
    let selected = pregenerated::set_for(macros);
    // Which set this header selects and whether bindgen made the bindings, for
    // tools/regen-bindings.sh.
    let record = |origin: &str| {
        let name = selected.as_deref().unwrap_or("none");
        write_if_changed(
            &out_dir.join("ferrompi-bindings-set"),
            &format!("{name} {origin}\n"),
        );
    };
    let mode = bindings_mode();
    let set = match mode {
        BindingsMode::Set(ref named) => Ok(named.clone()),
        _ => selected.clone(),
    };
    // Without the `bindgen` feature the kept bindings are the choice, not a fallback: no warning.
    let wanted =
        mode == BindingsMode::Bindgen || (mode == BindingsMode::Auto && cfg!(feature = "bindgen"));
    if wanted {
        match generate_bindings(out_dir, flags) {
            Ok(text) => {
                record("bindgen");
                return (text, String::new());
            }
            Err(why) if mode == BindingsMode::Bindgen => panic!(
                "{why}\n(FERROMPI_BINDINGS=bindgen forbids falling back to the kept bindings; \
                 unset it to allow that)"
            ),
            Err(why) => {
                let why = why.lines().next().unwrap_or_default();
                let set = set.as_deref().unwrap_or("(none fits)");
                println!(
                    "cargo:warning={why} Using the bindings kept in build/bindings/{set}.rs, \
                     checked against mpi.h."
                );
            }
        }
    }
    let set = set.unwrap_or_else(|why| {
        panic!(
            "ferrompi: bindgen cannot run and no kept bindings fit the MPI found via {source}: \
             {why}.\n{LIBCLANG_FIX}"
        )
    });
    record("kept");
    let text = read_set(&set);
    verify_set(out_dir, flags, &set, &text, source);
    write_if_changed(&out_dir.join("bindings.rs"), &text);
    (
        text,
        format!(" (bindings kept in build/bindings/{set}.rs, checked against mpi.h)"),
    )
}

const LIBCLANG_FIX: &str = "Fix: install libclang so bindgen reads this mpi.h (Debian/Ubuntu: \
     apt-get install libclang-dev; elsewhere set LIBCLANG_PATH to the directory holding \
     libclang.so), or regenerate the kept bindings with tools/regen-bindings.sh on a machine \
     that has it";

/// The text of `build/bindings/<set>.rs`.
fn read_set(set: &str) -> String {
    let dir = Path::new(&env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("build/bindings");
    let path = dir.join(format!("{set}.rs"));
    fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "ferrompi: no kept bindings for {set} ({}: {e}); kept sets: {}.\n{LIBCLANG_FIX}",
            path.display(),
            pregenerated::SETS.join(", ")
        )
    })
}

/// Compiles the static assertions that check a kept set against the installed `mpi.h`.
fn verify_set(out_dir: &Path, flags: &MpiFlags, set: &str, text: &str, source: &str) {
    let check = out_dir.join("ferrompi_check.c");
    write_if_changed(
        &check,
        &format!(
            "#include \"ferrompi_shim.h\"\n{}",
            pregenerated::c_checks(text)
        ),
    );
    let mut cmd = c_compiler(out_dir, flags).to_command();
    cmd.args(["-std=c11", "-fsyntax-only"]).arg(&check);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("ferrompi: cannot run the C compiler ({cmd:?}): {e}"));
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut failures = pregenerated::failures(&stderr, 12);
        if failures.is_empty() {
            failures = stderr.lines().take(12).map(str::to_string).collect();
        }
        panic!(
            "ferrompi: the bindings kept in build/bindings/{set}.rs do not match the mpi.h found \
             via {source}; using them would be a silently wrong binding. First mismatches:\n  - {}\n\
             {LIBCLANG_FIX}",
            failures.join("\n  - ")
        );
    }
}

/// A C compiler set up with the MPI's include directories and defines.
fn c_compiler(out_dir: &Path, flags: &MpiFlags) -> cc::Tool {
    let mut build = cc::Build::new();
    build.include(out_dir).cargo_metadata(false);
    for dir in &flags.include_dirs {
        build.include(dir);
    }
    for define in &flags.defines {
        build.flag(define);
    }
    build.get_compiler()
}

/// The macros `mpi.h` defines (`cc -E -dM`), which also proves the header is there and usable:
/// a probe that found a wrapper or package but no header ends here with what to install.
fn header_macros(out_dir: &Path, flags: &MpiFlags, source: &str) -> BTreeMap<String, String> {
    // bindgen registers the headers it reads; without it (kept bindings) register mpi.h here.
    for dir in &flags.include_dirs {
        let header = dir.join("mpi.h");
        if header.is_file() {
            println!("cargo:rerun-if-changed={}", header.display());
        }
    }
    let mut cmd = c_compiler(out_dir, flags).to_command();
    cmd.args(["-E", "-dM", "-x", "c"])
        .arg(out_dir.join("ferrompi_shim.h"));
    match cmd.output() {
        Ok(out) if out.status.success() => {
            pregenerated::parse_macros(&String::from_utf8_lossy(&out.stdout))
        }
        Ok(out) => panic!(
            "ferrompi: MPI was found via {source}, but the C compiler cannot include <mpi.h> \
             with the include directories {:?}:\n{}\nFix: install the MPI's development files \
             (Debian/Ubuntu: apt-get install libopenmpi-dev or libmpich-dev), or point the build \
             at them with MPI_INCLUDE_DIR=<dir with mpi.h> MPI_LIB_DIR=<dir with libmpi>",
            flags.include_dirs,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(6)
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Err(e) => panic!(
            "ferrompi: cannot run the C compiler ({cmd:?}) to read mpi.h: {e}.\nFix: install a C \
             compiler (Debian/Ubuntu: apt-get install gcc) or set CC"
        ),
    }
}

/// A probe result: flags plus a description of where they came from.
type Found = (MpiFlags, String);

/// Runs the probe in order; on failure returns every attempt and why it failed.
fn find_mpi() -> Result<Found, Vec<String>> {
    let mut tried = Vec::new();
    if let Some(mpicc) = env::var_os("MPICC") {
        let mpicc = mpicc.to_string_lossy().into_owned();
        return from_wrapper(&mpicc, &mut tried).ok_or(tried);
    }
    if let Some(pkg) = env::var_os("MPI_PKG_CONFIG") {
        let pkg = pkg.to_string_lossy().into_owned();
        return from_pkg_config(&pkg, &mut tried).ok_or(tried);
    }
    match (env::var_os("MPI_INCLUDE_DIR"), env::var_os("MPI_LIB_DIR")) {
        (Some(inc), Some(lib)) => {
            let libs = env::var("MPI_LIBS").unwrap_or_else(|_| "mpi".into());
            let flags = MpiFlags {
                include_dirs: vec![PathBuf::from(&inc)],
                lib_dirs: vec![PathBuf::from(&lib)],
                libs: libs.split(',').map(|l| l.trim().to_string()).collect(),
                ..MpiFlags::default()
            };
            let header = Path::new(&inc).join("mpi.h");
            if header.is_file() {
                return Ok((flags, format!("MPI_INCLUDE_DIR={}", inc.to_string_lossy())));
            }
            tried.push(format!(
                "MPI_INCLUDE_DIR: {} does not exist",
                header.display()
            ));
            return Err(tried);
        }
        (Some(_), None) | (None, Some(_)) => {
            tried.push("MPI_INCLUDE_DIR and MPI_LIB_DIR must be set together".into());
            return Err(tried);
        }
        (None, None) => {}
    }
    if let Some(found) = from_wrapper("mpicc", &mut tried) {
        return Ok(found);
    }
    for pkg in ["ompi", "mpich"] {
        if let Some(found) = from_pkg_config(pkg, &mut tried) {
            return Ok(found);
        }
    }
    Err(tried)
}

/// Asks a compiler wrapper how it compiles: `-show` (MPICH, Intel MPI) then `--showme` (Open MPI).
fn from_wrapper(mpicc: &str, tried: &mut Vec<String>) -> Option<Found> {
    for arg in ["-show", "--showme"] {
        let attempt = format!("`{mpicc} {arg}`");
        match Command::new(mpicc).arg(arg).output() {
            Err(e) => {
                tried.push(format!("{attempt}: could not run it: {e}"));
                return None;
            }
            Ok(out) if !out.status.success() => {
                tried.push(format!("{attempt}: exited with {}", out.status));
            }
            Ok(out) => {
                let line = String::from_utf8_lossy(&out.stdout);
                match probe::shell_split(line.trim()) {
                    Ok(words) if words.len() > 1 => {
                        return Some((probe::classify(&words, true), attempt));
                    }
                    Ok(_) => tried.push(format!("{attempt}: printed no flags")),
                    Err(e) => tried.push(format!("{attempt}: cannot split {line:?}: {e:?}")),
                }
            }
        }
    }
    None
}

fn from_pkg_config(pkg: &str, tried: &mut Vec<String>) -> Option<Found> {
    let attempt = format!("`pkg-config --cflags --libs {pkg}`");
    match Command::new("pkg-config")
        .args(["--cflags", "--libs", pkg])
        .output()
    {
        Err(e) => tried.push(format!("{attempt}: could not run pkg-config: {e}")),
        Ok(out) if !out.status.success() => tried.push(format!(
            "{attempt}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(out) => match probe::shell_split(String::from_utf8_lossy(&out.stdout).trim()) {
            Ok(words) => return Some((probe::classify(&words, false), attempt)),
            Err(e) => tried.push(format!("{attempt}: cannot split its output: {e:?}")),
        },
    }
    None
}

fn fail_not_found(tried: &[String]) -> ! {
    let mut msg = String::from("ferrompi: could not find an MPI installation.\nTried, in order:\n");
    for t in tried {
        let _ = writeln!(msg, "  - {t}");
    }
    msg.push_str(
        "How to fix:\n  - Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin  (or libmpich-dev mpich)\n  \
         - or point the build at an installation: MPICC=/path/to/mpicc, MPI_PKG_CONFIG=<pkg-config name>,\n    \
         or MPI_INCLUDE_DIR=<dir with mpi.h> MPI_LIB_DIR=<dir with libmpi> [MPI_LIBS=mpi]\n",
    );
    panic!("{msg}");
}

fn shim_names() -> impl Iterator<Item = (&'static str, &'static str, bool)> {
    HANDLE_CONSTANTS.iter().copied()
}

/// Writes `wrapper.h` (what bindgen reads), `ferrompi_shim.h` and `ferrompi_shim.c`.
fn write_shim(out_dir: &Path) {
    let mut header = String::from(
        "/* Generated by ferrompi's build.rs. */\n#ifndef FERROMPI_SHIM_H\n#define FERROMPI_SHIM_H\n\
         #include <mpi.h>\n#if defined(OPEN_MPI) && defined(__has_include)\n\
         #  if __has_include(<mpi-ext.h>)\n#    include <mpi-ext.h>\n#  endif\n#endif\n",
    );
    let mut source =
        String::from("/* Generated by ferrompi's build.rs. */\n#include \"ferrompi_shim.h\"\n");
    for (ty, name, required) in shim_names() {
        let (open, close) = if required {
            (String::new(), "")
        } else {
            (format!("#ifdef {name}\n"), "#endif\n")
        };
        let _ = write!(header, "{open}extern {ty} const ferrompi_{name};\n{close}");
        let _ = write!(
            source,
            "{open}{ty} const ferrompi_{name} = {name};\n{close}"
        );
    }
    header.push_str("#endif\n");
    write_if_changed(&out_dir.join("ferrompi_shim.h"), &header);
    write_if_changed(&out_dir.join("ferrompi_shim.c"), &source);
}

/// Writes `handles.rs`: each handle constant of [`HANDLE_CONSTANTS`] that `mpi.h` defines, as
/// a Rust `const` of what the C preprocessor expands it to (see `build/handles.rs`).
fn write_handles(out_dir: &Path, flags: &MpiFlags, bindings: &str, source: &str) {
    let mut text = String::from("#include \"ferrompi_shim.h\"\n");
    for (_, name, _) in shim_names() {
        // A string literal before each macro marks its line; the literal is not expanded.
        let _ = write!(text, "#ifdef {name}\n\"{name}\" {name}\n#endif\n");
    }
    let file = out_dir.join("ferrompi_handles.c");
    write_if_changed(&file, &text);
    let mut cmd = c_compiler(out_dir, flags).to_command();
    cmd.args(["-E", "-P"]).arg(&file);
    let output = match cmd.output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!(
            "ferrompi: the C compiler cannot expand mpi.h's handle macros (MPI found via \
             {source}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("ferrompi: cannot run the C compiler ({cmd:?}): {e}"),
    };
    let mut found = Vec::new();
    for (ty, name, required) in shim_names() {
        let marker = format!("\"{name}\"");
        let line = output
            .lines()
            .find_map(|l| l.trim().strip_prefix(marker.as_str()));
        match line {
            Some(expansion) => found.push((ty, name, expansion.trim())),
            None if required => panic!("ferrompi: mpi.h (found via {source}) lacks {name}"),
            None => {}
        }
    }
    let module = handles::module(&found, bindings).unwrap_or_else(|why| {
        panic!("ferrompi: the MPI found via {source}: {why}; please report it with the MPI's name")
    });
    write_if_changed(&out_dir.join("handles.rs"), &module);
}

/// Writes `contents` to `path` unless the file holds exactly that already. Its modification time
/// then moves only when its content does: bindgen registers the shim header as a
/// `rerun-if-changed` input, so rewriting it on every run made every `cargo build` rerun this
/// script and recompile the crate.
fn write_if_changed(path: &Path, contents: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return;
    }
    if let Err(e) = fs::write(path, contents) {
        panic!("ferrompi: cannot write {}: {e}", path.display());
    }
}

#[cfg(feature = "bindgen")]
fn clang_args(flags: &MpiFlags) -> Vec<String> {
    let mut args: Vec<String> = flags
        .include_dirs
        .iter()
        .map(|d| format!("-I{}", d.display()))
        .collect();
    args.extend(flags.defines.iter().cloned());
    args
}

/// Without the `bindgen` feature: says so (only `FERROMPI_BINDINGS=bindgen` asks for it then).
#[cfg(not(feature = "bindgen"))]
fn generate_bindings(_out_dir: &Path, _flags: &MpiFlags) -> Result<String, String> {
    Err(
        "ferrompi: built without its `bindgen` feature, so bindgen cannot run. Enable the \
         feature (the default)"
            .into(),
    )
}

/// Runs bindgen over the shim header; `Err` says why it could not.
#[cfg(feature = "bindgen")]
fn generate_bindings(out_dir: &Path, flags: &MpiFlags) -> Result<String, String> {
    let header = out_dir.join("ferrompi_shim.h");
    let builder = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_args(clang_args(flags))
        .allowlist_function("MPIX?_.*")
        .allowlist_type("MPIX?_.*|MPIR_Combiner_enum|MPIR_Topo_type")
        .allowlist_var("MPIX?_.*|ferrompi_.*|OPEN_MPI|OMPI_(MAJOR|MINOR|RELEASE)_VERSION|OMPI_COMM_TYPE_.*|MPICH_VERSION|MPICH_NUMVERSION")
        .new_type_alias("MPI_(Comm|Datatype|Op|Group|Request|Errhandler|Info|Win|Message|File|Session)")
        .default_macro_constant_type(bindgen::MacroTypeVariation::Signed)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .derive_default(true)
        .derive_eq(true)
        .derive_hash(true)
        .layout_tests(true)
        .rust_edition(bindgen::RustEdition::Edition2024)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    // bindgen panics (rather than erroring) when it cannot load libclang: turn that into advice.
    // Silence the default hook meanwhile: the fallback's warning says what happened.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let generated =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate()));
    std::panic::set_hook(hook);
    let bindings = match generated {
        Ok(Ok(bindings)) => bindings,
        Ok(Err(e)) => {
            return Err(format!(
                "ferrompi: bindgen could not parse mpi.h with flags {:?}: {e}",
                clang_args(flags)
            ));
        }
        Err(_) => {
            return Err(format!(
                "ferrompi: bindgen could not load libclang (needed to read mpi.h).\n{LIBCLANG_FIX}"
            ));
        }
    };
    let text = probe::anonymous_enums_as_c_int(&bindings.to_string());
    write_if_changed(&out_dir.join("bindings.rs"), &text);
    Ok(text)
}

fn compile_shim(out_dir: &Path, flags: &MpiFlags) {
    let mut build = cc::Build::new();
    build
        .file(out_dir.join("ferrompi_shim.c"))
        .include(out_dir)
        .warnings(true);
    for dir in &flags.include_dirs {
        build.include(dir);
    }
    for define in &flags.defines {
        build.flag(define);
    }
    build.compile("ferrompi_shim");
}

fn emit_link(flags: &MpiFlags) {
    for dir in &flags.lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Binaries of this package find a non-system MPI without LD_LIBRARY_PATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    for lib in &flags.libs {
        println!("cargo:rustc-link-lib={lib}");
    }
    for arg in &flags.link_args {
        println!("cargo:rustc-link-arg={arg}");
    }
    if let Some(dir) = flags.include_dirs.first() {
        // Exposed to dependents' build scripts as DEP_FERROMPI_MPI_INCLUDE (`links`).
        println!("cargo:include={}", dir.display());
    }
}

fn emit_cfgs(caps: &Capabilities, source: &str) {
    println!(
        "cargo:rustc-check-cfg=cfg(ferrompi_family, values(\"openmpi\", \"mpich\", \"abi\", \"other\"))"
    );
    for cfg in [
        "docsrs",
        "ferrompi_mpi4",
        "ferrompi_persistent_coll",
        "ferrompi_mpix_persistent_coll",
        "ferrompi_large_count",
        "ferrompi_c_bool",
        "ferrompi_isendrecv",
        "ferrompi_hw_guided",
        "ferrompi_ompi_comm_types",
    ] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    println!(
        "cargo:rustc-cfg=ferrompi_family=\"{}\"",
        caps.family.cfg_value()
    );
    let flags = [
        ("ferrompi_mpi4", caps.version.0 >= 4),
        ("ferrompi_persistent_coll", caps.persistent_collectives),
        (
            "ferrompi_mpix_persistent_coll",
            caps.mpix_persistent_collectives,
        ),
        ("ferrompi_large_count", caps.large_count),
        ("ferrompi_c_bool", caps.c_bool),
        ("ferrompi_isendrecv", caps.isendrecv),
        ("ferrompi_hw_guided", caps.hw_guided),
        ("ferrompi_ompi_comm_types", caps.ompi_comm_types),
    ];
    for (cfg, on) in flags {
        if on {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
    let abi = if caps.family == probe::Family::StandardAbi {
        " (MPI-5 standard ABI)"
    } else {
        ""
    };
    println!("cargo:rustc-env=FERROMPI_BUILD_PROBE={source}{abi}");
    println!(
        "cargo:rustc-env=FERROMPI_BUILD_MPI_VERSION={}.{}",
        caps.version.0, caps.version.1
    );
}

/// Compiles the C reference of the benchmarks with the compiler wrapper the crate was probed
/// with (`MPICC`, or `mpicc` from `PATH`; the default C compiler with the same flags when the
/// probe used pkg-config or directories) and links it into the benchmark binaries only
/// (`rustc-link-arg-benches`), never into the library.
fn compile_bench_reference(
    out_dir: &Path,
    flags: &MpiFlags,
    probe_source: &str,
    caps: &Capabilities,
) {
    let source = Path::new("benches/c/reference.c");
    println!("cargo:rerun-if-changed={}", source.display());
    if !source.exists() {
        return; // a packaged crate without its benchmarks
    }
    let mut build = cc::Build::new();
    // The probe's attempt names the wrapper: "`mpicc.mpich -show`".
    if let Some(wrapper) = probe_source
        .strip_prefix('`')
        .and_then(|s| s.split(' ').next())
        && wrapper != "pkg-config"
    {
        build.compiler(wrapper);
    }
    build
        .file(source)
        .warnings(true)
        // MPICH defines MPI_STATUSES_IGNORE as `(MPI_Status *)1`, which GCC reports as a
        // zero-size region passed to MPI_Waitall.
        .flag_if_supported("-Wno-stringop-overflow")
        // Calls into libmpi the way rustc makes them: through the GOT (`call *MPI_Put@GOTPCREL`),
        // not through a PLT stub, so that a ratio compares the binding with C and not two call
        // forms. On this AMD EPYC a PLT call is ~0.4 ns cheaper, 3 % of an 8-byte put + flush on
        // Open MPI; tools/call-form.sh measures it (docs/performance.md, "Calls into libmpi: PLT or GOT").
        .flag_if_supported("-fno-plt")
        .opt_level(2)
        .cargo_metadata(false);
    for dir in &flags.include_dirs {
        build.include(dir);
    }
    for define in &flags.defines {
        build.flag(define);
    }
    // Which persistent allreduce the C side calls: decided by what the bindings declare.
    if caps.persistent_collectives {
        build.define("FERROMPI_PERSISTENT_COLL", None);
    } else if caps.mpix_persistent_collectives {
        build.define("FERROMPI_MPIX_PERSISTENT_COLL", None);
    }
    build.compile("ferrompi_bench_c");
    println!(
        "cargo:rustc-link-arg-benches={}",
        out_dir.join("libferrompi_bench_c.a").display()
    );
}
