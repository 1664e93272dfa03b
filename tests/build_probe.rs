//! Unit tests of the build-time probe's parsing (`build/probe.rs`) and of the kept bindings'
//! selection and checks (`build/pregenerated.rs`), both shared with `build.rs`.

#[allow(dead_code)]
#[path = "../build/probe.rs"]
mod probe;

#[allow(dead_code)]
#[path = "../build/pregenerated.rs"]
mod pregenerated;

use probe::{Family, SplitError, anonymous_enums_as_c_int, capabilities, classify, shell_split};
use std::path::PathBuf;

fn words(line: &str) -> Vec<String> {
    shell_split(line).expect("splits")
}

#[test]
fn splits_like_a_shell() {
    assert_eq!(
        words("gcc -I/usr/include -lmpi"),
        ["gcc", "-I/usr/include", "-lmpi"]
    );
    assert_eq!(words("  a \t b\n c  "), ["a", "b", "c"]);
    assert_eq!(
        words(r#"gcc "-I/opt/my mpi/include" -L'/opt/my mpi/lib'"#),
        ["gcc", "-I/opt/my mpi/include", "-L/opt/my mpi/lib"]
    );
    assert_eq!(
        words(r"gcc -I/opt/my\ mpi/include"),
        ["gcc", "-I/opt/my mpi/include"]
    );
    assert_eq!(
        words(r#"a "q\"uote\\" 'it''s'"#),
        ["a", r#"q"uote\"#, "its"]
    );
    assert_eq!(words(r#""""#), [""]);
    assert_eq!(words(""), Vec::<String>::new());
    assert_eq!(
        shell_split("gcc 'unterminated"),
        Err(SplitError::UnterminatedQuote)
    );
    assert_eq!(
        shell_split("gcc \"unterminated"),
        Err(SplitError::UnterminatedQuote)
    );
    assert_eq!(shell_split("gcc \\"), Err(SplitError::TrailingBackslash));
}

#[test]
fn classifies_open_mpi_showme() {
    let flags = classify(
        &words(
            "gcc -I/usr/lib/x86_64-linux-gnu/openmpi/include -I/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi \
             -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi",
        ),
        true,
    );
    assert_eq!(flags.include_dirs.len(), 2);
    assert_eq!(
        flags.lib_dirs,
        [PathBuf::from("/usr/lib/x86_64-linux-gnu/openmpi/lib")]
    );
    assert_eq!(flags.libs, ["mpi"]);
}

#[test]
fn classifies_mpich_show_with_linker_flags() {
    let flags = classify(
        &words(
            "gcc -Wl,-z,relro -I/usr/include/x86_64-linux-gnu/mpich -L/usr/lib/x86_64-linux-gnu -lmpich -pthread",
        ),
        true,
    );
    assert_eq!(
        flags.include_dirs,
        [PathBuf::from("/usr/include/x86_64-linux-gnu/mpich")]
    );
    assert_eq!(flags.libs, ["mpich"]);
    assert_eq!(flags.link_args, ["-Wl,-z,relro", "-pthread"]);
}

#[test]
fn classifies_separated_values_defines_and_library_paths() {
    let flags = classify(
        &words(
            "-I /opt/mpi/include -DFOO=1 -O2 -L /opt/mpi/lib -l mpi /opt/mpi/lib/libextra.so.12 -Xlinker --enable-new-dtags",
        ),
        false,
    );
    assert_eq!(flags.include_dirs, [PathBuf::from("/opt/mpi/include")]);
    assert_eq!(flags.lib_dirs, [PathBuf::from("/opt/mpi/lib")]);
    assert_eq!(flags.libs, ["mpi"]);
    assert_eq!(flags.defines, ["-DFOO=1"]);
    assert_eq!(
        flags.link_args,
        ["/opt/mpi/lib/libextra.so.12", "-Wl,--enable-new-dtags"]
    );
}

#[test]
fn reads_capabilities_from_bindings() {
    let mpich = "pub const MPI_VERSION: i32 = 4;\npub const MPI_SUBVERSION: i32 = 0;\n\
                 pub const MPICH_VERSION: &[u8; 6] = b\"4.0.2\\0\";\n\
                 pub fn MPI_Allreduce_init(\npub fn MPI_Send_c(\npub static ferrompi_MPI_C_BOOL: MPI_Datatype;";
    let caps = capabilities(mpich).expect("parses");
    assert_eq!(caps.family, Family::Mpich);
    assert_eq!(caps.version, (4, 0));
    assert!(caps.persistent_collectives && caps.large_count && caps.c_bool);
    assert!(!caps.mpix_persistent_collectives);

    let ompi = "pub const OPEN_MPI: i32 = 1;\npub const MPI_VERSION: i32 = 3;\npub const MPI_SUBVERSION: i32 = 1;\n\
                pub fn MPIX_Allreduce_init(";
    let caps = capabilities(ompi).expect("parses");
    assert_eq!((caps.family, caps.version), (Family::OpenMpi, (3, 1)));
    assert!(caps.mpix_persistent_collectives && !caps.persistent_collectives && !caps.large_count);

    // Open MPI 5 reports MPI 3.1 yet declares MPI-4's persistent collectives: the declaration
    // decides, not the version.
    let ompi5 = "pub const OPEN_MPI: i32 = 1;\npub const MPI_VERSION: i32 = 3;\npub const MPI_SUBVERSION: i32 = 1;\n\
                 pub fn MPI_Allreduce_init(\npub fn MPI_Send_c(";
    let caps = capabilities(ompi5).expect("parses");
    assert_eq!((caps.family, caps.version), (Family::OpenMpi, (3, 1)));
    assert!(caps.persistent_collectives && caps.large_count && !caps.mpix_persistent_collectives);

    // The MPI-5 standard ABI header names no implementation.
    let abi = "pub const MPI_VERSION: i32 = 5;\npub const MPI_SUBVERSION: i32 = 0;\n\
               pub const MPI_ABI_VERSION: i32 = 1;\npub fn MPI_Allreduce_init(";
    let caps = capabilities(abi).expect("parses");
    assert_eq!((caps.family, caps.version), (Family::StandardAbi, (5, 0)));

    assert!(
        capabilities("pub const OPEN_MPI: i32 = 1;").is_err(),
        "no MPI_VERSION is an error"
    );
}

#[test]
fn anonymous_enum_constants_are_c_int() {
    let generated = "pub const MPI_SUCCESS: _bindgen_ty_1 = 0;\n\
                     pub type _bindgen_ty_1 = ::std::os::raw::c_uint;\n\
                     pub type MPI_T_cb_safety = ::std::os::raw::c_uint;\n\
                     pub type _bindgen_ty_2 = ::std::os::raw::c_int;\n";
    assert_eq!(
        anonymous_enums_as_c_int(generated),
        "pub const MPI_SUCCESS: _bindgen_ty_1 = 0;\n\
         pub type _bindgen_ty_1 = ::std::os::raw::c_int;\n\
         pub type MPI_T_cb_safety = ::std::os::raw::c_uint;\n\
         pub type _bindgen_ty_2 = ::std::os::raw::c_int;\n"
    );
}

mod kept_bindings {
    //! `build/pregenerated.rs`: which kept set a header selects, and the C checks of a set.

    use super::pregenerated::{SETS, c_checks, failures, parse_macros, set_for};

    fn set(dm: &str) -> Result<String, String> {
        set_for(&parse_macros(dm))
    }

    #[test]
    fn a_header_selects_its_family_and_major_version() {
        let ompi = "#define OPEN_MPI 1\n#define OMPI_MAJOR_VERSION 4\n#define MPI_VERSION 3\n";
        assert_eq!(set(ompi).as_deref(), Ok("openmpi-4"));
        let mpich = "#define MPICH_VERSION \"5.0.2\"\n#define MPI_VERSION 5\n";
        assert_eq!(set(mpich).as_deref(), Ok("mpich-5"));
        // The standard ABI wins over the library that ships it.
        let abi = "#define MPICH_VERSION \"5.0.2\"\n#define MPI_ABI_VERSION 1\n";
        assert_eq!(set(abi).as_deref(), Ok("mpi-abi"));
        assert!(set("#define MPI_VERSION 3\n").is_err());
        assert!(set("#define OPEN_MPI 1\n").is_err(), "no major version");
        for kept in ["openmpi-4", "openmpi-5", "mpich-4", "mpich-5", "mpi-abi"] {
            assert!(SETS.contains(&kept));
        }
        // Function-like macros are not values.
        assert!(!parse_macros("#define MPI_Wtime(x) y\n").contains_key("MPI_Wtime"));
    }

    #[test]
    fn checks_cover_constants_types_layouts_and_functions() {
        let bindings = r#"
pub const MPI_ANY_SOURCE: i32 = -1;
pub const OMPI_RELEASE_VERSION: i32 = 4;
pub const MPI_SUCCESS: _bindgen_ty_1 = 0;
pub type _bindgen_ty_1 = ::std::os::raw::c_int;
pub const MPI_T_cb_safety_MPI_T_CB_REQUIRE_NONE: MPI_T_cb_safety = 0;
pub type MPI_T_cb_safety = ::std::os::raw::c_uint;
pub const MPICH_VERSION: &[u8; 6] = b"4.0.2\0";
pub type MPI_Aint = isize;
pub type MPI_Offset = i64;
pub type MPI_Count = MPI_Offset;
pub struct MPI_Comm(pub *mut ompi_communicator_t);
pub type MPI_Status = ompi_status_public_t;
const _: () = {
    ["Size of ompi_status_public_t"][::std::mem::size_of::<ompi_status_public_t>() - 24usize];
    ["Offset of field: ompi_status_public_t::MPI_TAG"]
        [::std::mem::offset_of!(ompi_status_public_t, MPI_TAG) - 4usize];
    ["Size of private_thing"][::std::mem::size_of::<private_thing>() - 8usize];
};
unsafe extern "C" {
    pub fn MPI_Send(buf: *const ::std::os::raw::c_void) -> ::std::os::raw::c_int;
}
impl X { pub fn set_bits(&mut self) {} }
"#;
        let c = c_checks(bindings);
        for want in [
            "(MPI_ANY_SOURCE) == (-1LL)",
            "(MPI_SUCCESS) == (0LL)",
            // A named enum's constant under its C name.
            "(MPI_T_CB_REQUIRE_NONE) == (0LL)",
            "sizeof(MPI_Aint) == sizeof(ptrdiff_t)",
            "((MPI_Aint)-1 < (MPI_Aint)0) == 1",
            "sizeof(MPI_Count) == sizeof(long long)",
            "sizeof(MPI_Comm) == sizeof(void *)",
            "sizeof(MPI_Status) == 24",
            "offsetof(MPI_Status, MPI_TAG) == 4",
            "sizeof(&MPI_Send) != 0",
        ] {
            assert!(c.contains(want), "missing {want} in\n{c}");
        }
        for absent in [
            "OMPI_RELEASE_VERSION",
            "MPICH_VERSION",
            "private_thing",
            "set_bits",
        ] {
            assert!(!c.contains(absent), "{absent} should not be checked:\n{c}");
        }
    }

    #[test]
    fn failures_name_what_differs() {
        let gcc = "check.c:3:1: error: static assertion failed: \"ferrompi check: MPI_VERSION == 5\"\n\
                   check.c:3:16: note: in expansion of macro\n\
                   check.c:9:16: error: 'MPI_ERR_ABI' undeclared here (not in a function)\n\
                   check.c:9:1: error: expression in static assertion is not an integer\n";
        assert_eq!(
            failures(gcc, 10),
            [
                "MPI_VERSION == 5",
                "MPI_ERR_ABI' undeclared here (not in a function)"
            ]
        );
    }
}

#[allow(dead_code)]
#[path = "../build/handles.rs"]
mod handles;

/// The handle macros' expansions of every MPI in the test matrix evaluate; other forms do not.
#[test]
fn evaluates_handle_macros() {
    use handles::{Value, evaluate};
    let address = |name: &str| Some(Value::Address(name.to_string()));
    // Open MPI 4.1 and 5.0.
    assert_eq!(
        evaluate("((MPI_Datatype) ((void *) &(ompi_mpi_byte)))"),
        address("ompi_mpi_byte")
    );
    assert_eq!(evaluate("((MPI_Status *) 0)"), Some(Value::Int(0)));
    assert_eq!(evaluate("((void *) 1)"), Some(Value::Int(1)));
    // MPICH 4 and 5.
    assert_eq!(
        evaluate("((MPI_Datatype)0x4c00010d)"),
        Some(Value::Int(0x4c00_010d))
    );
    assert_eq!(evaluate("(void *) -1"), Some(Value::Int(-1)));
    assert_eq!(evaluate("(MPI_Status *)1"), Some(Value::Int(1)));
    // The MPI-5 ABI (MPICH 5's mpi_abi.h).
    assert_eq!(evaluate("((MPI_Comm)0x00000101)"), Some(Value::Int(0x101)));
    assert_eq!(evaluate("((void*)1)"), Some(Value::Int(1)));
    // Literals: suffixes, octal, decimal; a cast of a cast.
    assert_eq!(evaluate("((int)(long)017UL)"), Some(Value::Int(15)));
    assert_eq!(evaluate("42"), Some(Value::Int(42)));
    assert_eq!(evaluate("&x"), address("x"));
    // Not handles, or forms not known: the build fails with the expansion instead.
    for unknown in [
        "",
        "ompi_mpi_byte",
        "(MPI_Datatype)",
        "f(1)",
        "1 + 2",
        "((MPI_Datatype) 0x12",
        "&1",
        "-&x",
        "\"text\"",
        "0xZZ",
    ] {
        assert_eq!(evaluate(unknown), None, "{unknown:?}");
    }
}

/// The generated module: integers into integer or pointer handles, addresses of the library's
/// objects, plain pointer constants; an address into an integer handle is refused.
#[test]
fn writes_handle_constants() {
    let bindings = "pub struct MPI_Comm(pub ::std::os::raw::c_int);\n\
                    pub struct MPI_Datatype(pub *mut ompi_datatype_t);\n";
    let module = handles::module(
        &[
            ("MPI_Comm", "MPI_COMM_WORLD", "((MPI_Comm)0x44000000)"),
            (
                "MPI_Datatype",
                "MPI_BYTE",
                "((MPI_Datatype) &(ompi_mpi_byte))",
            ),
            ("void *", "MPI_IN_PLACE", "(void *) -1"),
        ],
        bindings,
    )
    .expect("evaluates");
    assert!(module.contains("pub const MPI_COMM_WORLD: MPI_Comm = MPI_Comm(0x44000000_i64 as _);"));
    assert!(module.contains(
        "pub const MPI_BYTE: MPI_Datatype = MPI_Datatype((&raw const objects::ompi_mpi_byte).cast_mut().cast());"
    ));
    assert!(module.contains("pub safe static ompi_mpi_byte: Object;"));
    assert!(
        module.contains("pub const MPI_IN_PLACE: *mut ::std::os::raw::c_void = -0x1_isize as _;")
    );
    let refused = handles::module(&[("MPI_Comm", "MPI_COMM_WORLD", "&(x)")], bindings);
    assert!(refused.is_err_and(|why| why.contains("is an integer")));
    let unknown = handles::module(&[("MPI_Comm", "MPI_COMM_WORLD", "f(1)")], bindings);
    assert!(unknown.is_err_and(|why| why.contains("`f(1)`")));
    let missing = handles::module(&[("MPI_Win", "MPI_WIN_NULL", "0")], bindings);
    assert!(missing.is_err_and(|why| why.contains("do not define MPI_Win")));
}
