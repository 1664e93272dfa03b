#!/usr/bin/env bash
# Runs a pack made by tools/bench-pack.sh on the machine it was carried to, needing only bash
# and, for Debian-built implementations, that machine's own MPI: the comparison with C at each
# rank count, into OUT/IMPL-nRANKS.{md,csv,log}, and OUT/machine.txt (processor, cores, system,
# MPI versions), which the report names as the machine.
#
#   DIR/tools/bench-run.sh OUT
#   RANKS="2 4 8 16"           rank counts (default 2 and 4, plus 8 and 16 where the cores are)
#   SCALING_BYTES=0,8,65536    above 2 ranks, only these sizes (the report's rank plots use
#                              0, 8 and 65536 bytes): a shorter run where time is short
#   IMPLS="openmpi"            only these of the pack's implementations
#   QUICK=1                    each benchmark once (criterion --test)
#   CPUS="2,3,4,5"             bind rank i to the i-th of these CPUs, so that two packs can run
#                              side by side on a machine with the cores (one implementation each,
#                              on CPUs of different physical cores); the report's machine line
#                              says so
set -euo pipefail
pack="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$pack/tools/launch.sh"
out=${1:?usage: bench-run.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ $(id -u) -ne 0 ]] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Criterion's own files go to a scratch folder, not into OUT.
CRITERION_HOME=$(mktemp -d)
export CRITERION_HOME
mode=(--bench)
[[ -z "${QUICK:-}" ]] || mode=(--bench --test)
mapfile -t ranks_list < <(rank_counts)

model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)
os=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release)
# machine.txt: this machine, then one line per implementation run (several runs into one OUT
# add to it).
[[ -s $out/machine.txt ]] || echo "${model:-unknown CPU}, $(nproc) cores, ${os:-unknown OS}" > "$out/machine.txt"
# The machine's own library path (a cluster's `module load` sets it), which a wheel's libraries
# go in front of.
site_libraries=${LD_LIBRARY_PATH:-}
for impl in ${IMPLS:-$(cat "$pack/impls")}; do
  pack_mpi "$pack" "$impl" "$site_libraries"
  if [[ -n ${CPUS:-} ]]; then
    case $impl in
      openmpi) MPIEXEC+=" --cpu-list $CPUS --bind-to cpu-list:ordered" ;;
      openmpi5) MPIEXEC+=" --map-by pe-list=$CPUS:ordered --bind-to core" ;;
      *) MPIEXEC+=" -bind-to user:$CPUS" ;;
    esac
  fi
  # "mpirun (Open MPI) 5.0.11", "mpirun.openmpi (OpenRTE) 4.1.4", Hydra's "Version: 5.0.2".
  version=$(${MPIEXEC%% *} --version 2>&1 | grep -m 1 -E 'Open MPI|OpenRTE|Version:' \
    | sed 's/^.*[ :] *\([0-9][0-9.a-z]*\)$/\1/' || true)
  line="$impl: ${version:-unknown version} ($(basename "${MPIEXEC%% *}")${CPUS:+, ranks bound to CPUs $CPUS})"
  grep -qxF "$line" "$out/machine.txt" || echo "$line" >> "$out/machine.txt"
  for ranks in "${ranks_list[@]}"; do
    rm -f "$out/$impl-n$ranks".*
    if ((ranks > 2)) && [[ -n ${SCALING_BYTES:-} ]]; then
      FERROMPI_BENCH_BYTES=$SCALING_BYTES run_comparison "$pack/bin/comparison-$impl" "$impl" "$ranks" "$out" "${mode[@]}"
    else
      run_comparison "$pack/bin/comparison-$impl" "$impl" "$ranks" "$out" "${mode[@]}"
    fi
  done
done
rm -rf "$CRITERION_HOME"
echo "== done: $out"
cat "$out/machine.txt"
