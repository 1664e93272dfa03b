//! How this process was started: the launcher (`mpirun`, Hydra's `mpiexec`, `srun`, none) and
//! the process-management interface it offers, read from the environment variables each one
//! sets, without an MPI call, so a program can tell a misconfigured launch before or after
//! `MPI_Init` (MPI-4.0 §11.10.2 for the singleton case).

/// How this process was started, as told by the environment the launcher sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Launcher {
    /// Open MPI's `mpirun`/`mpiexec` of Open MPI 4 and older, ORTE (sets
    /// `OMPI_COMM_WORLD_SIZE`).
    OpenMpiMpirun,
    /// PRRTE's `prterun`, which is Open MPI 5's `mpirun` (sets `PRTE_LAUNCHED` beside
    /// `OMPI_COMM_WORLD_SIZE`).
    Prterun,
    /// MPICH's Hydra `mpiexec` (sets `PMI_RANK` and `MPI_LOCALNRANKS`).
    Hydra,
    /// Slurm's `srun` (sets `SLURM_STEP_ID` and `SLURM_PROCID`), with the process-management
    /// interface its `--mpi` option chose.
    Srun(Pmi),
    /// Some other PMI or PMIx launcher.
    OtherPmi,
    /// No launcher: a singleton `MPI_Init` (MPI-4.0 §11.10.2, "Singleton MPI_INIT"), e.g.
    /// `cargo run`.
    Singleton,
}

/// The process-management interface a launcher offers its processes: how MPI learns its
/// rank, size and peers at `MPI_Init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pmi {
    /// PMIx (`PMIX_RANK`): `srun --mpi=pmix`, what Open MPI needs.
    Pmix,
    /// PMI-2 (`PMI_FD` or `PMI_JOBID` with `PMI_RANK`): `srun --mpi=pmi2`, what MPICH uses.
    Pmi2,
    /// None (`srun --mpi=none`, or a Slurm without the plugin): MPICH then starts every task as a
    /// singleton of size 1, and Open MPI refuses to start. [`Launcher::warning`] says so.
    None,
}

/// The launcher as its users call it, e.g. `Slurm srun (PMIx)`.
///
/// ```
/// use ferrompi::{Launcher, Pmi};
/// assert_eq!(Launcher::Srun(Pmi::Pmix).to_string(), "Slurm srun (PMIx)");
/// assert_eq!(Launcher::Singleton.to_string(), "no launcher (a singleton)");
/// ```
impl std::fmt::Display for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launcher::OpenMpiMpirun => f.write_str("Open MPI mpirun"),
            Launcher::Prterun => f.write_str("PRRTE prterun (Open MPI 5 mpirun)"),
            Launcher::Hydra => f.write_str("MPICH Hydra mpiexec"),
            Launcher::Srun(pmi) => write!(f, "Slurm srun ({pmi})"),
            Launcher::OtherPmi => f.write_str("a PMI launcher"),
            Launcher::Singleton => f.write_str("no launcher (a singleton)"),
        }
    }
}

/// The interface's usual name: `PMIx`, `PMI-2`, `no PMI`.
impl std::fmt::Display for Pmi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pmi::Pmix => "PMIx",
            Pmi::Pmi2 => "PMI-2",
            Pmi::None => "no PMI",
        })
    }
}

impl Launcher {
    /// Detects the launcher from the variables of this process's environment.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Launcher;
    /// let launcher = Launcher::detect(); // from this process's environment, no MPI call
    /// println!("started by {launcher:?}");
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn detect() -> Launcher {
        Launcher::detect_from(|name| std::env::var_os(name).is_some())
    }

    /// Detects the launcher from a predicate saying which environment variables are set.
    ///
    /// Open MPI's and Hydra's own variables win over Slurm's, since `mpirun` inside an allocation
    /// runs under a Slurm step too.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Launcher, Pmi};
    /// let under_srun = |var: &str| ["SLURM_STEP_ID", "SLURM_PROCID", "PMI_FD"].contains(&var);
    /// assert_eq!(Launcher::detect_from(under_srun), Launcher::Srun(Pmi::Pmi2));
    /// assert_eq!(Launcher::detect_from(|_| false), Launcher::Singleton);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn detect_from(is_set: impl Fn(&str) -> bool) -> Launcher {
        if is_set("OMPI_COMM_WORLD_SIZE") {
            if is_set("PRTE_LAUNCHED") {
                Launcher::Prterun
            } else {
                Launcher::OpenMpiMpirun
            }
        } else if is_set("PMI_RANK") && (is_set("MPI_LOCALNRANKS") || is_set("HYDI_CONTROL_FD")) {
            Launcher::Hydra
        } else if is_set("SLURM_STEP_ID") && is_set("SLURM_PROCID") {
            Launcher::Srun(if is_set("PMIX_RANK") {
                Pmi::Pmix
            } else if is_set("PMI_RANK") || is_set("PMI_FD") || is_set("PMI_JOBID") {
                Pmi::Pmi2
            } else {
                Pmi::None
            })
        } else if is_set("PMI_RANK") || is_set("PMIX_RANK") || is_set("PMI_FD") {
            Launcher::OtherPmi
        } else {
            Launcher::Singleton
        }
    }

    /// What is wrong with this launch, if something visibly is: `srun` started several tasks
    /// (`step_tasks`, from `SLURM_STEP_NUM_TASKS`) without a PMI, so each task's MPI is a
    /// singleton (`world_size` 1) instead of one job. A program can print it and stop.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Launcher, Pmi};
    /// // srun --mpi=none started 4 tasks, and each one's MPI is a singleton:
    /// let warning = Launcher::Srun(Pmi::None).warning(1, Some(4));
    /// assert!(warning.is_some());
    /// assert_eq!(Launcher::Singleton.warning(1, None), None);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn warning(self, world_size: i32, step_tasks: Option<u32>) -> Option<String> {
        match (self, step_tasks) {
            (Launcher::Srun(Pmi::None), Some(tasks)) if tasks > 1 && world_size == 1 => {
                Some(format!(
                    "srun started {tasks} tasks without a PMI, so each is an MPI job of its own: \
                 use srun --mpi=pmix (Open MPI) or --mpi=pmi2 (MPICH)"
                ))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(vars: &[&str]) -> Launcher {
        Launcher::detect_from(|name| vars.contains(&name))
    }

    #[test]
    fn launcher_detection() {
        assert_eq!(detect(&[]), Launcher::Singleton);
        assert_eq!(
            detect(&["OMPI_COMM_WORLD_SIZE", "PMIX_RANK"]),
            Launcher::OpenMpiMpirun
        );
        assert_eq!(
            detect(&["PMI_RANK", "PMI_FD", "MPI_LOCALNRANKS"]),
            Launcher::Hydra
        );
        assert_eq!(
            detect(&["SLURM_STEP_ID", "SLURM_PROCID", "PMI_RANK"]),
            Launcher::Srun(Pmi::Pmi2)
        );
        assert_eq!(
            detect(&["SLURM_STEP_ID", "SLURM_PROCID", "PMIX_RANK"]),
            Launcher::Srun(Pmi::Pmix)
        );
        let none = detect(&["SLURM_STEP_ID", "SLURM_PROCID"]);
        assert_eq!(none, Launcher::Srun(Pmi::None));
        assert!(none.warning(1, Some(4)).unwrap().contains("--mpi=pmix"));
        assert_eq!(none.warning(4, Some(4)), None);
        assert_eq!(
            detect(&["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PRTE_LAUNCHED"]),
            Launcher::Prterun
        );
        // mpirun inside a Slurm allocation is still mpirun.
        assert_eq!(
            detect(&["SLURM_STEP_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_SIZE"]),
            Launcher::OpenMpiMpirun
        );
        // A batch script's environment (job, no step) is not srun.
        assert_eq!(
            detect(&["SLURM_JOB_ID", "SLURM_PROCID"]),
            Launcher::Singleton
        );
        assert_eq!(detect(&["PMIX_RANK"]), Launcher::OtherPmi);
    }
}
