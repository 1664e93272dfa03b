//! The rank hierarchy, split types, NUMA groups and the Slurm job, checked against what the
//! launch asked for. Plain runs check consistency; `tools/test.sh` also runs it
//!
//! - over fake hosts (`FERROMPI_EXPECT_NODES`, `FERROMPI_EXPECT_HOSTS`),
//! - on a synthetic two-NUMA-domain machine (`FERROMPI_EXPECT_NUMA=bound|unbound`, with
//!   `FERROMPI_NUMA_SYSFS` and `HWLOC_XMLFILE` describing the same fake machine),
//! - under a real Slurm (`FERROMPI_EXPECT_SLURM=nodes=2,cpus_per_task=2,mem=300`), where every
//!   Slurm value is checked against the request and the hostlist against `scontrol`.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::topology::{Hierarchy, NumaSource};
use ferrompi::{Error, HwResource, Launcher, Mpi, OpenMpiLocality, Pmi, SplitType, Sum};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let h = t.okay(world.hierarchy(), "hierarchy");
    if world.rank() == 0 {
        println!("{h}");
    }
    consistency(&world, &h, t);
    node_grid(mpi, &world, &h, t);
    split_types(&world, t);
    if let Ok(n) = std::env::var("FERROMPI_EXPECT_NODES") {
        let n: usize = n.parse().expect("FERROMPI_EXPECT_NODES: a number");
        t.eq(h.node_count(), n.min(world.size() as usize), "nodes");
    }
    if let Ok(hosts) = std::env::var("FERROMPI_EXPECT_HOSTS") {
        // "node1:2,node2:1": host names and ranks per node, in node order.
        let want: Vec<(String, usize)> = hosts
            .split(',')
            .map(|h| {
                let (name, n) = h
                    .split_once(':')
                    .expect("FERROMPI_EXPECT_HOSTS: host:ranks");
                (name.to_string(), n.parse().expect("a rank count"))
            })
            .collect();
        let got: Vec<(String, usize)> = h
            .node_hosts()
            .iter()
            .map(|s| s.to_string())
            .zip(h.ranks_per_node())
            .collect();
        t.eq(got, want, "hosts and ranks per node");
    }
    match std::env::var("FERROMPI_EXPECT_NUMA").as_deref() {
        Ok("bound") => {
            // Two ranks bound to the two domains of the fake machine: a group each.
            t.ok(
                h.numa.is_some(),
                format!("bound rank has a NUMA group: {h}"),
            );
            t.eq(
                h.numa.as_ref().map(|c| c.size()),
                Some(1),
                "NUMA group size",
            );
            t.okay(h.check_one_rank_per_numa(), "one rank per NUMA domain");
            t.eq(
                h.placement.bound_numa_node(),
                Some(world.rank() as u32 % 2),
                "Linux's NUMA node",
            );
        }
        Ok("unbound") => {
            t.ok(h.numa.is_none(), "an unbound rank has no NUMA group");
            t.ok(h.numa_leaders.is_none(), "nor leads one");
            t.ok(h.to_string().contains("unbound"), "the report says unbound");
            t.err(
                h.check_one_rank_per_numa(),
                |e| e.to_string().contains("not bound within one domain"),
                "one rank per NUMA domain refused",
            );
            t.eq_ok(world.split_numa().map(|c| c.is_none()), true, "split_numa");
        }
        _ => {}
    }
    if let Ok(spec) = std::env::var("FERROMPI_EXPECT_SLURM") {
        slurm(&world, &h, &spec, t);
    }
}

/// What must hold on any launch.
fn consistency(world: &ferrompi::Communicator<'_>, h: &Hierarchy<'_>, t: &mut Checks) {
    let size = world.size() as usize;
    t.eq(h.ranks.len(), size, "a place per rank");
    t.eq(
        h.ranks_per_node().iter().sum::<usize>(),
        size,
        "ranks per node add up",
    );
    let me = &h.ranks[world.rank() as usize];
    t.eq(me.node, h.node_index(), "own node index");
    t.eq(
        h.ranks_per_node()[h.node_index()],
        h.node.size() as usize,
        "node communicator size",
    );
    t.eq(
        hostname(),
        me.host.clone(),
        "own host name (MPI_Get_processor_name)",
    );
    // Every rank of a node has that node's host name, and host names tell nodes apart.
    for (r, place) in h.ranks.iter().enumerate() {
        let same_node = place.node == me.node;
        t.eq(
            place.host == me.host,
            same_node,
            format!("host of rank {r}"),
        );
    }
    let nodes = h.node_count() as i32;
    t.eq(h.node_leaders.is_some(), h.node.rank() == 0, "node leader");
    if let Some(leaders) = &h.node_leaders {
        t.eq(leaders.size(), nodes, "one leader per node");
        t.eq(
            leaders.rank() as usize,
            h.node_index(),
            "leaders in node order",
        );
    }
    // NUMA groups lie inside the node; their leaders count the groups.
    if let Some(numa) = &h.numa {
        t.ok(numa.size() <= h.node.size(), "NUMA group within the node");
        t.eq(Some(numa.size()), me.numa_size, "NUMA size as gathered");
    }
    t.eq(
        h.numa_leaders.is_some(),
        h.numa.as_ref().is_some_and(|c| c.rank() == 0),
        "NUMA leader",
    );
    let groups = t.okay(
        sum(world, i32::from(h.numa_leaders.is_some())),
        "count NUMA groups",
    );
    if let Some(leaders) = &h.numa_leaders {
        t.eq(leaders.size(), groups, "one leader per NUMA group");
    }
    let numa = t.okay(world.split_numa(), "split_numa");
    t.eq(
        numa.map(|c| c.size()),
        h.numa.as_ref().map(|c| c.size()),
        "split_numa agrees with the hierarchy",
    );
    if matches!(h.numa_source, NumaSource::OperatingSystem) {
        t.eq(
            me.numa_node.is_some(),
            h.numa.is_some(),
            "OS groups follow binding",
        );
    }
    t.ok(h.threads_per_rank() >= 1, "threads per rank");
    let report = h.to_string();
    t.ok(
        report.contains(&format!("on {nodes} node(s)")) && report.contains(&me.host),
        format!("report: {report}"),
    );
}

/// `Hierarchy::cart_create`: a grid of every process in which each node's processes hold one
/// box (over fake hosts, boxes of several nodes), in 2 and 3 dimensions; bad input refused.
fn node_grid(mpi: &Mpi, world: &ferrompi::Communicator<'_>, h: &Hierarchy<'_>, t: &mut Checks) {
    let size = world.size() as usize;
    for ndims in [2usize, 3] {
        let periods = vec![false; ndims];
        let grid = t.okay(
            h.cart_create(world, ndims, &periods),
            "hierarchy cart_create",
        );
        t.eq(grid.size(), world.size(), "the grid holds every process");
        t.eq(grid.ndims(), ndims, "its dimensions");
        t.eq_ok(grid.rank_of(grid.coords()), grid.rank(), "its coordinates");
        // Every process's node and coordinates.
        let mut mine = vec![h.node_index() as i32];
        mine.extend_from_slice(grid.coords());
        let mut all = vec![0i32; size * (ndims + 1)];
        t.okay(world.allgather(&mine, &mut all), "allgather of the places");
        let places: Vec<&[i32]> = all.chunks(ndims + 1).collect();
        let mut seen: Vec<&[i32]> = places.iter().map(|p| &p[1..]).collect();
        seen.sort_unstable();
        seen.dedup();
        t.eq(seen.len(), size, "every process at a place of its own");
        let per_node = h.ranks_per_node();
        if per_node.windows(2).all(|w| w[0] == w[1]) {
            // Each node's processes on a box of the shape dims_create gives its count.
            let box_dims = t.okay(
                mpi.dims_create(per_node[0] as i32, &vec![0; ndims]),
                "dims_create of a node",
            );
            for node in 0..h.node_count() {
                let at: Vec<&[i32]> = places
                    .iter()
                    .filter(|p| p[0] == node as i32)
                    .map(|p| &p[1..])
                    .collect();
                let extents: Vec<i32> = (0..ndims)
                    .map(|d| {
                        let (lo, hi) = at.iter().fold((i32::MAX, i32::MIN), |(lo, hi), c| {
                            (lo.min(c[d]), hi.max(c[d]))
                        });
                        hi - lo + 1
                    })
                    .collect();
                t.eq(
                    &extents,
                    &box_dims,
                    format!("node {node}'s processes on one box"),
                );
            }
        }
    }
    let bad = h.cart_create(world, 2, &[false]);
    t.err(
        bad,
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "one period for two dimensions",
    );
    if h.node.size() != world.size() {
        let other = h.cart_create(&h.node, 2, &[false, false]);
        t.err(
            other,
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "a communicator other than the hierarchy's",
        );
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer's length is passed; gethostname NUL-terminates within it when it fits.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, 0, "gethostname");
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn sum(comm: &ferrompi::Communicator<'_>, mine: i32) -> ferrompi::Result<i32> {
    let mut out = [0];
    comm.allreduce(&[mine], &mut out, Sum)?;
    Ok(out[0])
}

/// Every split type: supported where the build says so, `Unsupported` elsewhere, opting out.
fn split_types(world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let node = t.okay(world.split_shared(world.rank()), "split_shared");
    t.ok(
        node.is_known_node_local(),
        "a node communicator is node-local",
    );
    t.ok(
        t_none(world.split_type(None, 0)),
        "opting out of split_type gives None",
    );
    // What the crate was built with decides (build.rs sets these cfgs for every target).
    let unsupported = |e: &Error| matches!(e.kind(), ErrorKind::Unsupported { .. });
    let guided = world.split_type(Some(SplitType::HwGuided(HwResource::SharedMemory)), 0);
    if cfg!(ferrompi_hw_guided) {
        // mpi_shared_memory: within the node (MPICH may answer MPI_COMM_NULL).
        t.ok_with(
            guided.map(|c| c.map(|c| c.size())),
            |size| size.is_none_or(|s| s <= node.size()),
            "HW_GUIDED mpi_shared_memory",
        );
    } else {
        t.err(guided, unsupported, "HW_GUIDED where the MPI lacks it");
    }
    let host = world.split_type(Some(SplitType::OpenMpi(OpenMpiLocality::Host)), 0);
    if cfg!(ferrompi_ompi_comm_types) {
        t.eq_ok(
            host.map(|c| c.map(|c| c.size())),
            Some(node.size()),
            "OMPI_COMM_TYPE_HOST is the node",
        );
    } else {
        t.err(host, unsupported, "OMPI_COMM_TYPE_* outside Open MPI");
    }
}

fn t_none<T>(r: ferrompi::Result<Option<T>>) -> bool {
    matches!(r, Ok(None))
}

/// `nodes=2,cpus_per_task=2,mem=300`: what the Slurm job was asked for.
fn slurm(world: &ferrompi::Communicator<'_>, h: &Hierarchy<'_>, spec: &str, t: &mut Checks) {
    let want = |key: &str| -> Option<u64> {
        spec.split(',')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.parse().expect("FERROMPI_EXPECT_SLURM: key=number"))
    };
    let Some(job) = &h.slurm else {
        t.ok(false, "a Slurm job was expected");
        return;
    };
    let size = world.size() as u32;
    t.eq(
        job.proc_id,
        Some(world.rank() as u32),
        "SLURM_PROCID is the rank",
    );
    t.eq(job.ntasks, Some(size), "SLURM_NTASKS");
    t.ok(job.step_id.is_some(), "in a step");
    t.eq(
        job.local_id,
        Some(h.node.rank() as u32),
        "SLURM_LOCALID is the node rank",
    );
    t.eq(
        job.node_id,
        Some(h.node_index() as u32),
        "SLURM_NODEID is the node index",
    );
    t.eq(
        job.tasks_on_node(),
        Some(h.node.size() as u32),
        "tasks on this node",
    );
    t.eq(
        job.tasks_per_node.iter().sum::<u32>(),
        size,
        "SLURM_TASKS_PER_NODE adds up",
    );
    if let Some(nodes) = want("nodes") {
        t.eq(job.num_nodes, Some(nodes as u32), "SLURM_JOB_NUM_NODES");
        t.eq(
            h.node_count() as u64,
            nodes.min(size as u64),
            "MPI sees the nodes",
        );
        t.eq(job.job_nodes.len() as u64, nodes, "SLURM_JOB_NODELIST");
    }
    // The MPI's host names are Slurm's node names (the fake hosts are named as the nodes).
    let hosts: Vec<String> = h.node_hosts().iter().map(|s| s.to_string()).collect();
    t.eq(
        hosts.clone(),
        job.step_nodes.clone(),
        "step nodes are the MPI's hosts",
    );
    t.eq(
        job.node_name.as_deref(),
        Some(h.ranks[world.rank() as usize].host.as_str()),
        "SLURMD_NODENAME",
    );
    if let Some(c) = want("cpus_per_task") {
        t.eq(job.cpus_per_task, Some(c as u32), "SLURM_CPUS_PER_TASK");
        t.eq(job.threads_per_rank(), Some(c as u32), "threads per rank");
        t.eq(
            h.threads_per_rank(),
            c as usize,
            "hierarchy threads per rank",
        );
        t.ok(
            job.job_cpus_per_node.iter().all(|&n| n as u64 >= c),
            "SLURM_JOB_CPUS_PER_NODE",
        );
    }
    if let Some(mem) = want("mem") {
        t.eq(job.mem_per_node_mib, Some(mem), "SLURM_MEM_PER_NODE");
        t.eq(
            job.memory_per_rank(),
            Some((mem / u64::from(h.node.size() as u32)) << 20),
            "memory per rank",
        );
    }
    let expected_pmi = match ferrompi::IMPLEMENTATION {
        ferrompi::Implementation::OpenMpi => Pmi::Pmix,
        _ => Pmi::Pmi2,
    };
    t.eq(h.launcher, Launcher::Srun(expected_pmi), "launcher");
    // The hostlist parser agrees with Slurm's own.
    if world.rank() == 0 {
        let list = std::env::var("SLURM_JOB_NODELIST").unwrap_or_default();
        let out = std::process::Command::new("scontrol")
            .args(["show", "hostnames", &list])
            .output();
        let out = t.okay(out, "scontrol show hostnames");
        let scontrol: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect();
        t.eq(
            job.job_nodes.clone(),
            scontrol,
            "expand_hostlist agrees with scontrol",
        );
        // Valid and invalid lists alike: the same names, or an error where scontrol has one.
        for expr in [
            "n[1-3,5]",
            "cn[008-011],login",
            "r[1-2]n[01-02],x",
            "a[9-10],,b",
            "[1-2]",
            "n[3-1]",
            "n[a-b]",
        ] {
            let out = t.okay(
                std::process::Command::new("scontrol")
                    .args(["show", "hostnames", expr])
                    .output(),
                "scontrol",
            );
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            let ours = ferrompi::slurm::expand_hostlist(expr);
            if text.contains("Invalid hostlist") {
                t.ok(
                    ours.is_err(),
                    format!("{expr}: scontrol refuses it, we gave {ours:?}"),
                );
            } else {
                let theirs: Vec<String> = text.lines().map(String::from).collect();
                t.eq_ok(ours, theirs, expr);
            }
        }
    }
}
