#!/usr/bin/env bash
# The cluster part of the suite, for one of Debian's MPIs (openmpi or mpich); needs root. Run by
# tools/test.sh after that MPI's own tests, with its build in place. Each step prints what it ran.
#
# 1. NUMA: a synthetic machine of two NUMA domains with one CPU each, told to the MPI's hwloc
#    (HWLOC_SYNTHETIC) and to ferrompi's detection (FERROMPI_NUMA_SYSFS, a fake
#    /sys/devices/system/node): 2 ranks bound to cores make two NUMA groups; unbound ranks get
#    the documented answer (no NUMA group).
# 2. Several hosts (tools/netns.sh): 4 ranks on three hosts with uneven slots (2+1+1), Open MPI
#    over TCP, MPICH over UCX's shared memory; and MPICH on two hosts of two ranks (2+2, see
#    below) isolated so that UCX uses TCP between them: node communicators, leaders and host
#    names. On Open MPI also the multinode program at 2-4 ranks over 2 hosts, and the C
#    comparison benchmarks once with their 2 ranks on two hosts.
# 3. Slurm (tools/slurm.sh): two nodes on the fake hosts; the topology, environment and multinode
#    programs under `salloc -N 2 -c 2 --mem=300` + `srun --mpi=pmix` (Open MPI) or `--mpi=pmi2`
#    (MPICH) at 2, 3 and 4 ranks, every Slurm value checked against that request; the topology
#    example and the C comparison benchmarks once under srun; the flagship (examples/sddp)
#    under srun on two nodes, which must make the same cuts as on one; on MPICH, srun without
#    --mpi (every task a singleton) must be warned about.
#
#   tools/cluster-tests.sh openmpi|mpich
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
impl=${1:?openmpi or mpich}
mpi_env "$impl"
[[ $(id -u) -eq 0 ]] || { echo "   SKIP: the cluster tests need root (namespaces, Slurm)"; exit 0; }
harness=(cargo test --all-features --locked --test mpi --)
cargo build --all-features --locked --examples --quiet
bench_exe=$(cargo bench --locked --bench comparison --no-run --message-format=json 2> /dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
log="$CARGO_TARGET_DIR/cluster"
mkdir -p "$log"
cleanup() { bash tools/slurm.sh down > /dev/null 2>&1 || true; }
trap cleanup EXIT

# attempts N WHAT CMD...: runs CMD up to N times, until it succeeds, printing each failed
# attempt; the script fails after the Nth. Only for steps whose failures are known to be
# intermittent (each says why): a program whose checks fail fails every attempt.
attempts() {
  local n=$1 what=$2 attempt
  shift 2
  for ((attempt = 1; ; attempt++)); do
    "$@" && return
    ((attempt < n)) || { echo "$what failed $n times"; exit 1; }
    echo "   attempt $attempt ($what) failed (see above); again"
  done
}

# A benchmark run under LAUNCHER..., each benchmark once (criterion --test), rank 0 reporting.
bench_once() {
  local name=$1
  shift
  FERROMPI_BENCH_OUT="$log/bench-$name" timeout 600 "$@" -n 2 "$bench_exe" --bench --test > "$log/bench-$name.log" 2>&1 \
    || { echo "comparison benchmarks failed under $*:"; tail -n 30 "$log/bench-$name.log"; exit 1; }
  echo "   comparison benchmarks, 2 ranks under ${*##*/}: ok ($(grep -c . "$log/bench-$name.md") report lines)"
}

echo "== $impl: NUMA on a synthetic machine (2 domains, 1 CPU each), 2 ranks, bound and unbound"
fake=$(mktemp -d)
for node in 0 1; do mkdir -p "$fake/node$node" && echo "$node" > "$fake/node$node/cpulist"; done
case $impl in
  openmpi) bind=(mpirun.openmpi --bind-to core) nobind=(mpirun.openmpi --bind-to none) ;;
  mpich) bind=(mpiexec.mpich -bind-to core) nobind=(mpiexec.mpich) ;;
esac
export HWLOC_SYNTHETIC="pack:2 numa:1 core:1 pu:1" HWLOC_THISSYSTEM=1 FERROMPI_NUMA_SYSFS=$fake
FERROMPI_RANKS=2 FERROMPI_EXPECT_NUMA=bound FERROMPI_MPIEXEC="${bind[*]}" "${harness[@]}" topology
FERROMPI_RANKS=2 FERROMPI_EXPECT_NUMA=unbound FERROMPI_MPIEXEC="${nobind[*]}" "${harness[@]}" topology
unset HWLOC_SYNTHETIC HWLOC_THISSYSTEM FERROMPI_NUMA_SYSFS
rm -rf "$fake"

bash tools/netns.sh up 3 > /dev/null
if [[ $impl == openmpi ]]; then
  echo "== $impl: three fake hosts with uneven slots (node1:2,node2:1,node3:1), 4 ranks"
  hosts=node1:2,node2:1,node3:1
  FERROMPI_NETNS_HOSTS=$hosts FERROMPI_EXPECT_HOSTS=$hosts FERROMPI_EXPECT_NODES=3 FERROMPI_RANKS=4 \
    FERROMPI_MPIEXEC="$ROOT/tools/netns.sh mpirun" "${harness[@]}" topology
  echo "== $impl: windows across two fake hosts, 2-4 ranks"
  FERROMPI_EXPECT_NODES=2 FERROMPI_RANKS=2,3,4 FERROMPI_MPIEXEC="$ROOT/tools/netns.sh mpirun" \
    "${harness[@]}" multinode
  bench_once netns "$ROOT/tools/netns.sh" mpirun
else
  # MPICH 4.0/UCX over TCP sometimes hangs in MPI_Finalize after every check has passed: the
  # ranks of one host spin in UCX progress, closing their endpoints, while the others wait in the
  # PMI barrier that follows, where they no longer progress the closes (pmodels/mpich#6596 removed
  # that barrier in MPICH 4.2; ../shared/envlab saw 0-70 % of runs). How often depends on the
  # layout: measured on an idle 2-core machine (`topology` at 4 ranks, a 10 s timeout),
  # 11 hangs in 20 runs on node1:2,node2:1,node3:1, 14 in 15 on three hosts of one rank, 8 in 20
  # on node1:1,node2:3, 2 in 20 on node1:3,node2:1, but 1 in 45 on node1:2,node2:2. No UCX
  # setting cured it (UCX_ASYNC_MODE=signal 4 in 20, UCX_TLS=tcp,self 7 in 20,
  # UCX_TCP_PUT_ENABLE=n 6 in 15). So MPICH runs the uneven hosts without isolation (they share
  # the boot id, so UCX uses shared memory between them, and the nodes are Hydra's; 0 hangs in
  # 15), and TCP between isolated hosts on two hosts of two ranks; each with a short timeout and
  # up to eight attempts, each printed.
  mpich_hosts() { # mpich_hosts HOSTS NODES ISOLATE
    attempts 8 "MPICH over fake hosts ($1)" env FERROMPI_NETNS_ISOLATE="$3" \
      FERROMPI_NETNS_HOSTS="$1" FERROMPI_EXPECT_HOSTS="$1" FERROMPI_EXPECT_NODES="$2" \
      FERROMPI_RANKS=4 FERROMPI_TEST_TIMEOUT=20 FERROMPI_MPIEXEC="$ROOT/tools/netns.sh mpiexec" \
      "${harness[@]}" topology
  }
  echo "== $impl: three fake hosts with uneven slots (node1:2,node2:1,node3:1), 4 ranks, shared memory"
  mpich_hosts node1:2,node2:1,node3:1 3 0
  echo "== $impl: two isolated fake hosts (node1:2,node2:2), 4 ranks, TCP"
  mpich_hosts node1:2,node2:2 2 1
fi
bash tools/netns.sh down

echo "== $impl: Slurm on two fake hosts (tools/slurm.sh)"
bash tools/slurm.sh up 2
case $impl in
  openmpi) pmi=pmix ;;
  mpich) pmi=pmi2 ;;
esac
# Open MPI's 4-rank multinode step has been seen to fail once at start-up, before any check
# ran. On node2, opening a peer's shared-memory segment gave ENOENT, then a TCP connect gave
# EINPROGRESS, then a rank crashed. The previous CI run and the next passed. Up to three
# attempts, each printed; a program whose checks fail fails every attempt.
attempts 3 "the programs under srun" env FERROMPI_EXPECT_SLURM=nodes=2,cpus_per_task=2,mem=300 \
  FERROMPI_RANKS=2,3,4 FERROMPI_MPIEXEC="$ROOT/tools/slurm.sh run -N 2 -c 2 --mem=300 --mpi=$pmi" \
  "${harness[@]}" topology environment multinode
timeout 120 bash tools/slurm.sh run -N 2 --mpi=$pmi -n 4 "$CARGO_TARGET_DIR/debug/examples/topology" > "$log/topology-srun.log" 2>&1 \
  || { echo "the topology example failed under srun:"; cat "$log/topology-srun.log"; exit 1; }
echo "   example topology under srun -N 2 -n 4: ok"
sed 's/^/     /' "$log/topology-srun.log" | head -n 12
bench_once srun "$ROOT/tools/slurm.sh" run -N 2 --mpi=$pmi
# The flagship on two nodes: a scenario table and a cut pool per node, the same cuts as on one.
sddp=("$ROOT/target/flagship/release/sddp" --iterations 4 --json) # built by tools/test.sh for this MPI
one=$(timeout 300 $MPIEXEC -n 4 "${sddp[@]}" --quiet | tail -n 1)
two=$(timeout 300 bash tools/slurm.sh run -N 2 --mpi=$pmi -n 4 "${sddp[@]}" | tee "$log/sddp-srun.log" | tail -n 1)
digest() { sed -n 's/.*"cut_digest":"\([0-9a-f]*\)".*/\1/p' <<< "$1"; }
[[ $two == *'"nodes":2'* && -n $(digest "$one") && $(digest "$one") == $(digest "$two") ]] \
  || { echo "the flagship under srun differs from one node:"; echo "$one"; cat "$log/sddp-srun.log"; exit 1; }
echo "   flagship (examples/sddp) under srun -N 2 -n 4: the same cuts as on one node ($(digest "$two"))"
if [[ $impl == mpich ]]; then
  # srun without a PMI: MPICH starts each task as a singleton; the launcher check says so.
  timeout 120 bash tools/slurm.sh run -N 2 -n 2 "$CARGO_TARGET_DIR/debug/examples/topology" > "$log/topology-nopmi.log" 2>&1 \
    || { echo "the topology example failed under srun --mpi=none:"; cat "$log/topology-nopmi.log"; exit 1; }
  grep -q "warning: srun started 2 tasks without a PMI" "$log/topology-nopmi.log" \
    || { echo "no warning for srun without a PMI:"; cat "$log/topology-nopmi.log"; exit 1; }
  echo "   example topology under srun without --mpi: warns that the tasks are singletons"
fi
bash tools/slurm.sh down
