//! The environment: versions, names, clocks, launcher, thread level, and init twice.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Implementation, Launcher, Mpi, Pmi};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.eq(world.size(), t.size(), "world size");
    t.ok((0..world.size()).contains(&world.rank()), "rank in range");

    let (major, minor) = t.okay(mpi.version(), "MPI_Get_version");
    t.eq(
        format!("{major}.{minor}"),
        ferrompi::MPI_VERSION.to_string(),
        "run-time version = mpi.h version",
    );
    let library = t.okay(mpi.library_version(), "library_version");
    let family_name = match ferrompi::IMPLEMENTATION {
        Implementation::OpenMpi => "Open MPI",
        Implementation::Mpich => "MPICH",
        // The ABI build names no implementation; this suite runs it on MPICH 5.
        Implementation::StandardAbi => "MPICH",
        Implementation::Other => "",
    };
    t.ok(
        library.contains(family_name),
        format!("library version {library:?} names {family_name}"),
    );
    t.ok(!ferrompi::BUILD_PROBE.is_empty(), "build probe recorded");
    t.eq(
        ferrompi::BUILD_PROBE.contains("MPI-5 standard ABI"),
        ferrompi::IMPLEMENTATION == Implementation::StandardAbi,
        "the build probe says when it is the standard ABI",
    );

    let host = t.okay(mpi.processor_name(), "processor_name");
    t.ok(!host.is_empty(), "processor name is not empty");

    let t0 = mpi.wtime();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let t1 = mpi.wtime();
    t.ok(
        t1 - t0 >= 0.004,
        format!("wtime advanced by {} s over a 5 ms sleep", t1 - t0),
    );
    t.ok(
        mpi.wtick() > 0.0 && mpi.wtick() < 1.0,
        "wtick is a sub-second resolution",
    );
    t.ok(
        mpi.tag_ub() >= 32767,
        "MPI_TAG_UB is at least the standard's minimum",
    );
    t.ok(
        mpi.thread_level() >= ferrompi::ThreadLevel::Single,
        "a thread level was provided",
    );

    let expected = std::env::var("FERROMPI_EXPECT_LAUNCHER").unwrap_or_default();
    let launcher = mpi.launcher();
    match expected.as_str() {
        "singleton" => t.eq(launcher, Launcher::Singleton, "launcher of a singleton run"),
        "launcher" => t.ok(
            matches!(
                launcher,
                Launcher::OpenMpiMpirun
                    | Launcher::Prterun
                    | Launcher::Hydra
                    | Launcher::Srun(Pmi::Pmix | Pmi::Pmi2)
            ),
            format!("launcher is mpirun, prterun, Hydra or srun with a PMI, got {launcher:?}"),
        ),
        other => t.ok(
            false,
            format!("driver set no expected launcher ({other:?})"),
        ),
    }

    // A second init while MPI is active is an error, not UB, from this and from another thread.
    t.err(
        Mpi::init(),
        |e| matches!(e.kind(), ErrorKind::AlreadyInitialized),
        "init twice",
    );
    let from_thread = std::thread::spawn(|| Mpi::init().map(drop))
        .join()
        .expect("thread");
    t.err(
        from_thread,
        |e| matches!(e.kind(), ErrorKind::AlreadyInitialized),
        "init twice from another thread",
    );

    // Names on the predefined communicators.
    t.eq_ok(world.name(), "MPI_COMM_WORLD".to_string(), "world's name");
    t.eq(mpi.self_comm().size(), 1, "self size");
    t.eq(mpi.self_comm().rank(), 0, "self rank");
}
