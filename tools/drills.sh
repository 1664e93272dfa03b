#!/usr/bin/env bash
# Fault drills: a 2-rank job over two fake hosts (tools/netns.sh: node1 and node2, TCP between
# them), every rank allreducing every 50 ms (examples/fault_drill.rs), the watchdog at 5 s
# (FERROMPI_WATCHDOG); 3 s in, the rank on node2 fails. For each failure the drill prints how
# long the job took to end after it, the launcher's exit code, the line ferrompi printed, and
# the processes of the job still alive on each host a second after the launcher returned (then
# killed). Needs root (namespaces). Each failure has 30 s (DRILL_DEADLINE); a job that
# outlives them is killed and reported as hung, a failure but for one launcher's known hang
# (Open MPI's, on a dead link: see docs/reliability.md).
#
#   err    the rank returns an Err from main with `?`      panic  the rank panics
#   stop   the rank stops itself (SIGSTOP: a wedged node)  kill   the rank is killed (SIGKILL)
#   exit   the rank exits without finalizing               link   node2's link goes down
#
#   tools/drills.sh faults                 both Debian MPIs, every failure
#   tools/drills.sh faults mpich           one MPI
#   DRILLS="stop link" tools/drills.sh faults openmpi
#
# Drills still to come beside `faults`: the same under srun, a soak (memory over long runs),
# threads at every level, and generated bad input for every public operation.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
part=${1:-}
[[ $part == faults ]] || { sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 2; }
shift
impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
[[ $(id -u) -eq 0 ]] || { echo "drills: the fault drills need root (network namespaces)"; exit 1; }
drills=(${DRILLS:-err panic stop kill exit link})
limit=5 fault_at=3 deadline=${DRILL_DEADLINE:-30}

cleanup() {
  ip netns exec node2 ip link set eth0 up 2> /dev/null || true
  bash tools/netns.sh down > /dev/null 2>&1 || true
}
trap cleanup EXIT

# The job's processes alive in a host's namespace: the program and the launcher's daemons.
alive_on() { # alive_on NODE
  local pid name found=()
  for pid in $(ip netns pids "$1" 2> /dev/null); do
    name=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
    case $name in fault_drill | orted | hydra_pmi_proxy | mpirun* | mpiexec*) found+=("$name") ;; esac
  done
  echo "${found[*]:-none}"
}

kill_all_on() { # kill_all_on NODE
  local pid
  for pid in $(ip netns pids "$1" 2> /dev/null); do kill -9 "$pid" 2> /dev/null || true; done
}

status=0
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  cargo build --all-features --locked --quiet --example fault_drill
  exe="$CARGO_TARGET_DIR/debug/examples/fault_drill"
  launcher=mpirun
  [[ $impl == mpich ]] && launcher=mpiexec
  echo "== $impl: 2 ranks on node1 and node2, watchdog ${limit}s, the rank on node2 fails ${fault_at}s in"
  printf '   %-6s %-10s %-5s %-42s %s\n' failure "ended" code "left alive (node1 / node2)" "ferrompi's line"
  for drill in "${drills[@]}"; do
    bash tools/netns.sh up 2 > /dev/null
    log=$(mktemp)
    env_drill=()
    case $drill in err | panic | stop | exit) env_drill=("FERROMPI_DRILL=$drill@1:$fault_at") ;; esac
    launched=$SECONDS
    FERROMPI_NETNS_HOSTS=node1:1,node2:1 timeout -s KILL "$deadline" \
      env FERROMPI_WATCHDOG=${limit}s FERROMPI_DRILL_SECONDS=30 "${env_drill[@]}" \
      bash tools/netns.sh "$launcher" -n 2 "$exe" > "$log" 2>&1 &
    job=$!
    # The rank on node2 is the second one up: wait for both to print.
    until (($(grep -c '^rank [01] of 2' "$log") == 2)) || ! kill -0 "$job" 2> /dev/null; do
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
        until grep -q 'failing now' "$log" || ! kill -0 "$job" 2> /dev/null; do sleep 0.05; done
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
    line=$(grep -m 1 -o 'ferrompi: rank .*' "$log" | cut -c 1-90) || line="(none)"
    printf '   %-6s %-10s %-5s %-42s %s\n' "$drill" "$ended" "$code" "$left" "$line"
    if [[ $impl == openmpi && $drill == link && $hung == 1 ]] && grep -q 'watchdog:' "$log"; then
      # Open MPI 4.1's runtime has no heartbeat: once the ranks are gone (the watchdog ended
      # the one on node1, its daemon the one on node2), mpirun waits for node2's daemon and
      # that daemon for mpirun, for ever (docs/reliability.md). Known, not a failure here.
      echo "      (known: Open MPI's mpirun and node2's orted wait for each other; the ranks ended)"
    elif [[ $code == 0 || $hung == 1 || $left != "none / none" ]]; then
      status=1
      tail -n 8 "$log" | sed 's/^/      | /'
    fi
    ip netns exec node2 ip link set eth0 up 2> /dev/null || true
    kill_all_on node1
    kill_all_on node2
    bash tools/netns.sh down > /dev/null
    rm -f "$log"
  done
done
exit $status
