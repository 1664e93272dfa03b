//! The user guide: how to build, run and use ferrompi, chapter by chapter. Documentation only:
//! every code block here is compiled as a doctest, so the guide stays true to the crate.
//!
//! | chapter | what |
//! |---|---|
//! | [`getting_started`] | depending on the crate, a first program, running it (`mpirun`, `srun`, singleton) |
//! | [`threads`] | thread levels, the thread gate, hybrid MPI + threads |
//! | [`nonblocking`] | requests in scopes, owned requests, request sets, futures, persistent requests, and their soundness rules |
//! | [`collectives`] | every collective, reductions and user ops, large counts, channels, typed messages |
//! | [`structured_data`] | `#[derive(Equivalence)]`, derived datatypes and views, packing |
//! | [`topologies`] | Cartesian grids, graphs and distributed graphs; neighbourhood collectives |
//! | [`windows`] | shared-memory windows and RMA |
//! | [`io`] | parallel I/O: files, views, collective and nonblocking reads and writes, consistency, errors |
//! | [`deployment`] | the node and NUMA hierarchy, Slurm, `sbatch` scripts, fake hosts |
//! | `gpu` | whether the MPI takes GPU memory; device buffers, direct or staged (feature `cuda`) |
//! | [`errors`] | errors, ending a job, and what the crate keeps sound |
//! | [`building`] | choosing an MPI, vendor MPIs, building without libclang |
//! | [`migrating`] | from rsmpi: equivalent calls |
//! | [`known_behaviours`] | what the tested MPIs do that a user may meet |

#[doc = include_str!("../docs/guide/getting-started.md")]
pub mod getting_started {}
#[doc = include_str!("../docs/guide/threads.md")]
pub mod threads {}
#[doc = include_str!("../docs/guide/nonblocking.md")]
pub mod nonblocking {}
#[doc = include_str!("../docs/guide/collectives.md")]
pub mod collectives {}
#[doc = include_str!("../docs/guide/structured-data.md")]
pub mod structured_data {}
#[doc = include_str!("../docs/guide/topologies.md")]
pub mod topologies {}
#[doc = include_str!("../docs/guide/windows.md")]
pub mod windows {}
#[doc = include_str!("../docs/guide/io.md")]
pub mod io {}
#[doc = include_str!("../docs/guide/deployment.md")]
pub mod deployment {}
#[cfg(feature = "cuda")]
#[doc = include_str!("../docs/guide/gpu.md")]
pub mod gpu {}
#[doc = include_str!("../docs/guide/errors.md")]
pub mod errors {}
#[doc = include_str!("../docs/guide/building.md")]
pub mod building {}
#[doc = include_str!("../docs/guide/migrating.md")]
pub mod migrating {}
#[doc = include_str!("../docs/guide/known-behaviours.md")]
pub mod known_behaviours {}
