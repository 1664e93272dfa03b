//! Unit tests of the build-time probe's parsing (`build/probe.rs`, shared with `build.rs`).

#[allow(dead_code)]
#[path = "../build/probe.rs"]
mod probe;

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
