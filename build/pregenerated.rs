//! Bindings generated ahead of time (`build/bindings/<set>.rs`, written by
//! `tools/regen-bindings.sh`), used by `build.rs` when bindgen cannot load libclang: which set
//! fits the installed `mpi.h` ([`set_for`]), and checks that it describes that header, written as
//! C11 static assertions the C compiler evaluates ([`c_checks`]).
//!
//! From the bindings' text the checks cover:
//! - every integer constant (`pub const NAME: T = VALUE;`) has that value in C;
//! - every `MPI_*`/`MPIX_*` handle or scalar type has the size (and, for integers, the
//!   signedness) Rust gives it;
//! - the size, alignment and field offsets of every struct the bindings lay out under an
//!   `MPI_*`/`MPIX_*` name (`MPI_Status` above all), from bindgen's own layout tests;
//! - every function the bindings declare is declared by the header.
//!
//! A header that differs fails to compile, naming the first mismatches; never a silently wrong
//! binding.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The sets kept in `build/bindings/`, one per ABI family and major version.
pub const SETS: &[&str] = &["openmpi-4", "openmpi-5", "mpich-4", "mpich-5", "mpi-abi"];

/// Which set describes a header, from its macros (`cc -E -dM` output, parsed by
/// [`parse_macros`]): `mpi-abi` for the MPI-5 standard ABI (`MPI_ABI_VERSION`),
/// `openmpi-<major>` (`OMPI_MAJOR_VERSION`), `mpich-<major>` (`MPICH_VERSION`).
pub fn set_for(macros: &BTreeMap<String, String>) -> Result<String, String> {
    if macros.contains_key("MPI_ABI_VERSION") {
        return Ok("mpi-abi".into());
    }
    if macros.contains_key("OPEN_MPI") {
        let major = macros
            .get("OMPI_MAJOR_VERSION")
            .ok_or("mpi.h defines OPEN_MPI but no OMPI_MAJOR_VERSION")?;
        return Ok(format!("openmpi-{}", major.trim()));
    }
    if let Some(version) = macros.get("MPICH_VERSION") {
        let major = version
            .trim()
            .trim_matches('"')
            .split('.')
            .next()
            .unwrap_or("");
        return Ok(format!("mpich-{major}"));
    }
    Err("mpi.h is neither Open MPI's, MPICH's nor the MPI-5 standard ABI's".into())
}

/// `#define NAME VALUE` lines (a preprocessor's `-dM` output) as a map; function-like macros
/// are left out.
pub fn parse_macros(output: &str) -> BTreeMap<String, String> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| {
            let (name, value) = l.split_once(' ').unwrap_or((l, ""));
            (!name.contains('(')).then(|| (name.to_string(), value.trim().to_string()))
        })
        .collect()
}

/// Constants that differ between patch releases of one ABI and that the crate does not use.
const UNCHECKED_CONSTANTS: &[&str] = &["OMPI_RELEASE_VERSION", "MPICH_NUMVERSION"];

/// The marker every failed assertion's message starts with (`build.rs` picks these lines out
/// of the compiler's output).
pub const MARKER: &str = "ferrompi check:";

/// The C type with the size and signedness of a Rust primitive that bindgen uses for a C type.
fn c_type_of(rust: &str) -> Option<&'static str> {
    let name = rust.trim().trim_start_matches("::std::os::raw::");
    Some(match name {
        "c_schar" | "i8" => "signed char",
        "c_uchar" | "u8" => "unsigned char",
        "c_short" | "i16" => "short",
        "c_ushort" | "u16" => "unsigned short",
        "c_int" | "i32" => "int",
        "c_uint" | "u32" => "unsigned int",
        "c_long" => "long",
        "c_ulong" => "unsigned long",
        "c_longlong" | "i64" => "long long",
        "c_ulonglong" | "u64" => "unsigned long long",
        "isize" => "ptrdiff_t",
        "usize" => "size_t",
        "f32" => "float",
        "f64" => "double",
        _ if name.starts_with("*mut ") || name.starts_with("*const ") => "void *",
        _ => return None,
    })
}

fn is_signed(rust: &str) -> Option<bool> {
    let name = rust.trim().trim_start_matches("::std::os::raw::");
    match name {
        "c_schar" | "i8" | "c_short" | "i16" | "c_int" | "i32" | "c_long" | "c_longlong"
        | "i64" | "isize" => Some(true),
        "c_uchar" | "u8" | "c_ushort" | "u16" | "c_uint" | "u32" | "c_ulong" | "c_ulonglong"
        | "u64" | "usize" => Some(false),
        _ => None,
    }
}

fn is_mpi_name(name: &str) -> bool {
    name.starts_with("MPI_") || name.starts_with("MPIX_")
}

/// `pub const NAME: TYPE = VALUE;` with an integer value.
fn integer_constant(line: &str) -> Option<(&str, &str, i128)> {
    let rest = line.strip_prefix("pub const ")?;
    let (name, rest) = rest.split_once(':')?;
    let (ty, value) = rest.split_once('=')?;
    let value = value.trim().strip_suffix(';')?.trim();
    Some((name.trim(), ty.trim(), value.parse().ok()?))
}

/// Facts read from bindgen's layout tests: `["Size of X"][... - 24usize];` and the like.
#[derive(Default)]
struct Layout {
    size: Option<u64>,
    align: Option<u64>,
    offsets: Vec<(String, u64)>,
}

/// The quoted label and the trailing `- Nusize` of one layout test, which bindgen may wrap
/// over two lines (joined by the caller).
fn layout_test(statement: &str) -> Option<(&str, u64)> {
    let label = statement.strip_prefix("[\"")?.split('"').next()?;
    let number = statement.rsplit("- ").next()?.split("usize").next()?;
    Some((label, number.trim().parse().ok()?))
}

/// Type aliases and handle newtypes: `pub type MPI_Aint = isize;`,
/// `pub struct MPI_Comm(pub *mut ompi_communicator_t);`.
fn aliases<'a>(lines: &[&'a str]) -> BTreeMap<&'a str, &'a str> {
    let mut map = BTreeMap::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("pub type ") {
            if let Some((name, target)) = rest.split_once(" = ")
                && let Some(target) = target.strip_suffix(';')
            {
                map.insert(name.trim(), target.trim());
            }
        } else if let Some(rest) = line.strip_prefix("pub struct ")
            && let Some((name, inner)) = rest.split_once("(pub ")
            && let Some(inner) = inner.strip_suffix(");")
        {
            map.insert(name.trim(), inner.trim());
        }
    }
    map
}

/// Follows aliases to a primitive: `_bindgen_ty_1 = c_int`, `MPI_Count = MPI_Offset`.
fn resolve<'a>(aliases: &BTreeMap<&'a str, &'a str>, mut ty: &'a str) -> &'a str {
    for _ in 0..4 {
        match aliases.get(ty) {
            Some(target) => ty = target,
            None => break,
        }
    }
    ty
}

/// The C source of the checks: one `FERROMPI_CHECK(condition, "what")` per fact.
pub fn c_checks<'a>(bindings: &'a str) -> String {
    let mut out = String::from(
        "/* Generated by ferrompi's build.rs from the bindings kept in build/bindings/. */\n\
         #include <stddef.h>\n\
         #define FERROMPI_CHECK(cond, what) _Static_assert(cond, \"ferrompi check: \" what)\n",
    );
    let lines: Vec<&str> = bindings.lines().map(str::trim).collect();
    let aliases = aliases(&lines);
    let resolve = |ty: &'a str| resolve(&aliases, ty);
    let mut layouts: BTreeMap<String, Layout> = BTreeMap::new();
    let mut functions = Vec::new();
    // Layout tests may span two lines; join a line that opens a label with the next.
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some((name, ty, value)) = integer_constant(line) {
            // A named enum's constants are `<enum>_<name>` in Rust (the enum as a module of
            // constants), `<name>` in C.
            let name = if c_type_of(ty).is_none() && !ty.starts_with("_bindgen_ty_") {
                name.strip_prefix(ty)
                    .and_then(|n| n.strip_prefix('_'))
                    .unwrap_or(name)
            } else {
                name
            };
            if !UNCHECKED_CONSTANTS.contains(&name) && c_type_of(resolve(ty)).is_some() {
                let suffix = if value > i128::from(i64::MAX) {
                    "ULL"
                } else {
                    "LL"
                };
                let _ = writeln!(
                    out,
                    "FERROMPI_CHECK(({name}) == ({value}{suffix}), \"{name} == {value}\");"
                );
            }
        } else if let Some(rest) = line.strip_prefix("pub fn ") {
            if let Some(name) = rest.split('(').next().map(str::trim)
                && is_mpi_name(name)
            {
                functions.push(name);
            }
        } else if line.starts_with("[\"") {
            let joined;
            let statement = if line.ends_with(';') || i >= lines.len() {
                line
            } else {
                joined = format!("{line}{}", lines[i]);
                i += 1;
                joined.as_str()
            };
            let Some((label, number)) = layout_test(statement) else {
                continue;
            };
            if let Some(ty) = label.strip_prefix("Size of ") {
                layouts.entry(ty.to_string()).or_default().size = Some(number);
            } else if let Some(ty) = label.strip_prefix("Alignment of ") {
                layouts.entry(ty.to_string()).or_default().align = Some(number);
            } else if let Some((ty, field)) = label
                .strip_prefix("Offset of field: ")
                .and_then(|f| f.split_once("::"))
            {
                layouts
                    .entry(ty.to_string())
                    .or_default()
                    .offsets
                    .push((field.to_string(), number));
            }
        }
    }

    for &name in aliases.keys().filter(|name| is_mpi_name(name)) {
        let target = resolve(name);
        let Some(c_type) = c_type_of(target) else {
            continue;
        };
        let _ = writeln!(
            out,
            "FERROMPI_CHECK(sizeof({name}) == sizeof({c_type}), \"sizeof({name}) == sizeof({c_type})\");"
        );
        if let Some(signed) = is_signed(target) {
            let want = if signed { "signed" } else { "unsigned" };
            let _ = writeln!(
                out,
                "FERROMPI_CHECK((({name})-1 < ({name})0) == {}, \"{name} is {want}\");",
                u8::from(signed)
            );
        }
    }

    for (rust_name, layout) in &layouts {
        // The C name: an MPI typedef of this struct (`MPI_Status = ompi_status_public_t`), or
        // the struct's own name when that is an MPI name (MPICH's `MPI_Status`).
        let c_name = aliases
            .iter()
            .find(|(alias, target)| is_mpi_name(alias) && **target == rust_name.as_str())
            .map(|(alias, _)| *alias)
            .or_else(|| is_mpi_name(rust_name).then_some(rust_name.as_str()));
        let Some(c_name) = c_name else { continue };
        if let Some(size) = layout.size {
            let _ = writeln!(
                out,
                "FERROMPI_CHECK(sizeof({c_name}) == {size}, \"sizeof({c_name}) == {size}\");"
            );
        }
        if let Some(align) = layout.align {
            let _ = writeln!(
                out,
                "FERROMPI_CHECK(_Alignof({c_name}) == {align}, \"_Alignof({c_name}) == {align}\");"
            );
        }
        for (field, offset) in &layout.offsets {
            if field.starts_with("_bitfield") {
                continue;
            }
            let _ = writeln!(
                out,
                "FERROMPI_CHECK(offsetof({c_name}, {field}) == {offset}, \"offsetof({c_name}, {field}) == {offset}\");"
            );
        }
    }

    for name in functions {
        let _ = writeln!(
            out,
            "FERROMPI_CHECK(sizeof(&{name}) != 0, \"{name} is declared\");"
        );
    }
    out
}

/// The compiler's error messages (a failed check, an undeclared name), at most `max`.
pub fn failures(compiler_output: &str, max: usize) -> Vec<String> {
    compiler_output
        .lines()
        .filter_map(|l| l.split_once("error: ").map(|(_, msg)| msg))
        // The follow-up of an undeclared name.
        .filter(|msg| !msg.contains("is not an integer"))
        .map(|msg| {
            let msg = msg.trim_start_matches("static assertion failed: ");
            let msg = msg.trim_matches(['"', '\'']);
            msg.trim_start_matches(MARKER).trim().to_string()
        })
        .take(max)
        .collect()
}
