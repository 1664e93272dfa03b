#!/usr/bin/env bash
# Drills: how a job ends when one of its ranks fails (faults), what long runs do to memory
# (soak), threads at every thread level (threads) and generated bad input (inputs). Each part
# takes a few minutes on two cores and exits non-zero when a drill fails.
#
# faults: a 2-rank job (DRILL_RANKS: up to 4, half on each host) over two fake hosts
# (tools/netns.sh: node1 and node2, TCP between them), every rank allreducing every 50 ms
# (examples/fault_drill.rs), the watchdog at 5 s (FERROMPI_WATCHDOG); 3 s in, the last rank
# (on node2) fails. For each failure the drill prints how long the job took to end after it,
# the launcher's exit code, the line ferrompi printed, and the processes of the job still
# alive on each host a second after the launcher returned (then killed; a kill kills every
# rank on node2). Needs root (namespaces). Each failure has 30 s (DRILL_DEADLINE); a job that
# outlives them is killed and reported as hung, a failure but for one launcher's known hang
# (Open MPI's, on a dead link: see docs/reliability.md).
#
#   err    the rank returns an Err from main with `?`      panic  the rank panics
#   stop   the rank stops itself (SIGSTOP: a wedged node)  kill   the rank is killed (SIGKILL)
#   exit   the rank exits without finalizing               link   node2's link goes down
#
# soak: examples/soak.rs at 2 ranks (SOAK_SCALE, 1: a million each of persistent allreduces,
# dup/free, isend/irecv batches and user operations, 100 000 shared windows) and at 4 ranks (a
# hundredth of that, at least scale 0.002; oversubscribed); the resident memory any rank gains
# after a warm-up must stay under 256 KiB per workload. SOAK_SCALE=0.02 is the suite's short soak.
#
# threads: examples/thread_drill.rs at each thread level, 2 and 4 ranks, THREAD_SECONDS (10)
# each, the watchdog at 30 s: 4 threads communicating at serialized and multiple, 4 threads
# whose every call must be refused at single and funneled; no wrong result, no call let
# through.
#
# inputs: examples/input_drill.rs at 1 to 4 ranks: INPUT_CASES (100 000) calls generated from
# proptest strategies at 2 ranks, a tenth at 1, 3 and 4: wrong ranks, roots and tags, lengths
# that disagree, partitions of the wrong size or overflowing, bad groups, window accesses past
# a segment or to a missing rank, and root buffers too short (the root alone calls); each
# must return the expected error, and the world must still reduce after them.
#
#   tools/drills.sh faults                 both Debian MPIs, every failure
#   tools/drills.sh faults mpich           one MPI
#   DRILLS="stop link" tools/drills.sh faults openmpi
#   DRILL_LAUNCHER=srun tools/drills.sh faults   the same jobs under Slurm (tools/slurm.sh: srun
#                                          --mpi=pmix for Open MPI, pmi2 for MPICH, one task per node)
#   SOAK_SCALE=0.02 tools/drills.sh soak   the short soak, both Debian MPIs
#   INPUT_CASES=2000 tools/drills.sh inputs
#   tools/drills.sh threads openmpi5       any of tools/setup.sh's MPIs (soak, threads, inputs;
#                                          faults under mpirun: Open MPI 5's and MPICH 5's
#                                          launchers over the same fake hosts)
#
#   DRILL_RANKS=4 tools/drills.sh faults   4 ranks, 2 on each host; rank 3 fails
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
part=${1:-}
[[ $part == faults || $part == soak || $part == threads || $part == inputs ]] || {
  sed -n '2,47p' "${BASH_SOURCE[0]}"
  exit 2
}
shift
impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)

# N ranks under the launcher of the MPI mpi_env selected (MPIEXEC: Open MPI's oversubscribes).
launch() { # launch N PROGRAM...
  local n=$1
  shift
  $MPIEXEC -n "$n" "$@"
}

if [[ $part == soak || $part == threads || $part == inputs ]]; then
  status=0
  for impl in "${impls[@]}"; do
    mpi_env "$impl"
    example=soak
    [[ $part == threads ]] && example=thread_drill
    [[ $part == inputs ]] && example=input_drill
    cargo build --all-features --locked --quiet --release --example "$example"
    exe="$CARGO_TARGET_DIR/release/examples/$example"
    if [[ $part == soak ]]; then
      scale=${SOAK_SCALE:-1}
      for n in 2 4; do
        s=$scale
        # (4 ranks on two cores: MPICH busy-polls, some 5 ms per collective.) A hundredth of
        # the rounds, but at least 2 000 (scale 0.002) where the scale allows: MPICH's pools
        # still grow for a few hundred `dup`s, so 200 rounds (20 to warm up) measured 140 to
        # 260 KiB of growth there against the 256 KiB bound, where 2 000 measure about 60.
        [[ $n == 4 ]] && s=$(awk -v s="$scale" 'BEGIN { t = s / 100; m = (s < 0.002) ? s : 0.002; print (t > m) ? t : m }')
        echo "== $impl: soak at $n ranks, scale $s"
        FERROMPI_SOAK_SCALE=$s FERROMPI_WATCHDOG=60s launch "$n" "$exe" || status=1
      done
    elif [[ $part == inputs ]]; then
      cases=${INPUT_CASES:-100000}
      for n in 1 2 3 4; do
        c=$cases
        [[ $n == 2 ]] || c=$((cases / 10))
        echo "== $impl: $c generated bad calls at $n ranks"
        FERROMPI_INPUT_CASES=$c FERROMPI_WATCHDOG=60s launch "$n" "$exe" || status=1
      done
    else
      for n in 2 4; do
        for level in single funneled serialized multiple; do
          printf '== %s, %d ranks: ' "$impl" "$n"
          FERROMPI_DRILL_LEVEL=$level FERROMPI_DRILL_SECONDS=${THREAD_SECONDS:-10} \
            FERROMPI_WATCHDOG=30s launch "$n" "$exe" || status=1
        done
      done
    fi
  done
  exit $status
fi
[[ $(id -u) -eq 0 ]] || { echo "drills: the fault drills need root (network namespaces)"; exit 1; }
drills=(${DRILLS:-err panic stop kill exit link})
# DRILL_RANKS ranks (2 to 4), the first half on node1, the rest on node2; the last one fails.
ranks=${DRILL_RANKS:-2}
((ranks >= 2 && ranks <= 4)) || { echo "DRILL_RANKS: 2 to 4"; exit 2; }
failing=$((ranks - 1))
limit=5 fault_at=3 deadline=${DRILL_DEADLINE:-30}

via=${DRILL_LAUNCHER:-mpirun}
[[ $via == mpirun || $via == srun ]] || { echo "DRILL_LAUNCHER: mpirun or srun"; exit 2; }
hosts_up() { if [[ $via == srun ]]; then bash tools/slurm.sh up 2; else bash tools/netns.sh up 2; fi; }
hosts_down() { if [[ $via == srun ]]; then bash tools/slurm.sh down; else bash tools/netns.sh down; fi; }

cleanup() {
  ip netns exec node2 ip link set eth0 up 2> /dev/null || true
  hosts_down > /dev/null 2>&1 || true
}
trap cleanup EXIT

# The job's processes alive in a host's namespace: the program and the launcher's daemons
# (under Slurm, the step's slurmstepd is Slurm's to end, with the allocation).
alive_on() { # alive_on NODE
  local pid name found=()
  for pid in $(ip netns pids "$1" 2> /dev/null); do
    name=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
    case $name in
      fault_drill | orted | prted | prterun | hydra_pmi_proxy | mpirun* | mpiexec* | srun | salloc)
        found+=("$name")
        ;;
    esac
  done
  echo "${found[*]:-none}"
}

kill_all_on() { # kill_all_on NODE: the job's processes (under Slurm, not its daemons)
  local pid name
  for pid in $(ip netns pids "$1" 2> /dev/null); do
    name=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
    [[ $via == srun && $name =~ ^(slurmd|slurmctld|munged)$ ]] && continue
    kill -9 "$pid" 2> /dev/null || true
  done
}

status=0
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  cargo build --all-features --locked --quiet --example fault_drill
  exe="$CARGO_TARGET_DIR/debug/examples/fault_drill"
  family=openmpi
  [[ $impl == mpich* ]] && family=mpich
  if [[ $via == srun ]]; then
    [[ $impl == openmpi || $impl == mpich ]] || { echo "drills: under srun, Debian's MPIs only"; exit 2; }
    pmi=pmix
    [[ $impl == mpich ]] && pmi=pmi2
    launcher="srun --mpi=$pmi"
    launch_job=(bash tools/slurm.sh run -N 2 "--mpi=$pmi" -n "$ranks" "$exe")
  else
    launcher=mpirun
    [[ $family == mpich ]] && launcher=mpiexec
    hosts=node1:$((ranks - ranks / 2)),node2:$((ranks / 2))
    # The newer MPIs' launchers (tools/setup.sh's) in place of Debian's.
    wheel=()
    case $impl in
      openmpi5) wheel=("FERROMPI_NETNS_MPIRUN=${MPIEXEC%% *}") ;;
      mpich5*) wheel=("FERROMPI_NETNS_MPIEXEC=${MPIEXEC%% *}") ;;
    esac
    launch_job=(env "${wheel[@]}" FERROMPI_NETNS_HOSTS=$hosts bash tools/netns.sh "$launcher" -n "$ranks" "$exe")
  fi
  echo "== $impl under $launcher: $ranks ranks on node1 and node2, watchdog ${limit}s, rank $failing (node2) fails ${fault_at}s in"
  printf '   %-6s %-10s %-5s %-42s %s\n' failure "ended" code "left alive (node1 / node2)" "ferrompi's line"
  for drill in "${drills[@]}"; do
    if [[ $via == srun && $impl == mpich && $drill == link ]]; then
      # Under this Slurm the fake hosts share one /dev/shm, and MPICH's ranks then talk through
      # shared memory, not over the link (tools/netns.sh isolates them for mpiexec).
      printf '   %-6s %s\n' link "(not drilled: MPICH's ranks share memory across these fake hosts)"
      continue
    fi
    hosts_up > /dev/null
    log=$(mktemp)
    env_drill=()
    case $drill in err | panic | stop | exit) env_drill=("FERROMPI_DRILL=$drill@$failing:$fault_at") ;; esac
    launched=$SECONDS
    timeout -s KILL "$deadline" \
      env FERROMPI_WATCHDOG=${limit}s FERROMPI_DRILL_SECONDS=30 "${env_drill[@]}" \
      "${launch_job[@]}" > "$log" 2>&1 &
    job=$!
    # Every rank says where it runs once up: wait for all of them.
    until (($(grep -acE "^rank [0-9]+ of $ranks " "$log") == ranks)) || ! kill -0 "$job" 2> /dev/null; do
      sleep 0.1
    done
    case $drill in
      kill | link)
        sleep "$fault_at"
        fault=$(date +%s.%N)
        if [[ $drill == link ]]; then
          ip netns exec node2 ip link set eth0 down
        else
          for pid in $(ip netns pids node2); do
            [[ $(cat "/proc/$pid/comm" 2> /dev/null) != fault_drill ]] || kill -KILL "$pid"
          done
        fi
        ;;
      *)
        # The rank says so just before it fails.
        until grep -aq 'failing now' "$log" || ! kill -0 "$job" 2> /dev/null; do sleep 0.05; done
        fault=$(date +%s.%N)
        ;;
    esac
    code=0
    wait "$job" 2> /dev/null || code=$?
    ended=$(awk -v f="$fault" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f s", n - f }')
    # (137 is also Open MPI's code for a job whose rank was killed.)
    hung=0
    ((SECONDS - launched < deadline)) || { hung=1 ended="hung (killed at ${deadline}s)"; }
    sleep 1
    left="$(alive_on node1) / $(alive_on node2)"
    line=$(grep -a -m 1 -o 'ferrompi: rank .*' "$log" | cut -c 1-90) || line="(none)"
    printf '   %-6s %-10s %-5s %-42s %s\n' "$drill" "$ended" "$code" "$left" "$line"
    if [[ $family == openmpi && $via == mpirun && $drill == link && $hung == 1 ]] &&
      grep -aq 'watchdog:' "$log" && [[ $left != *fault_drill* ]]; then
      # Open MPI's runtime (4.1's ORTE, 5.0's PRRTE) notices no dead link: once the ranks are
      # gone (the watchdog ended the one on node1, its daemon the one on node2), mpirun waits
      # for node2's daemon and that daemon for mpirun, for ever (docs/reliability.md). Known,
      # not a failure here.
      echo "      (known: Open MPI's mpirun and node2's daemon wait for each other; the ranks ended)"
    elif [[ $code == 0 || $hung == 1 || $left != "none / none" ]]; then
      status=1
      tail -n 8 "$log" | sed 's/^/      | /'
    fi
    ip netns exec node2 ip link set eth0 up 2> /dev/null || true
    kill_all_on node1
    kill_all_on node2
    hosts_down > /dev/null
    rm -f "$log"
  done
done
exit $status
