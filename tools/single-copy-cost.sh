#!/usr/bin/env bash
# What turning off Open MPI's shared-memory single-copy path (CMA) costs: a plain C ping-pong
# (benches/c/pingpong.c), 2 ranks, alternating runs with the default (single copy on) and with it
# off as ferrompi sets it, then the median one-way latency per size and mode.
#
#   tools/single-copy-cost.sh [runs]     # default 6 runs of each
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
runs=${1:-6}
out="$ROOT/target/single-copy"
mkdir -p "$out"
mpicc.openmpi -O2 "$ROOT/benches/c/pingpong.c" -o "$out/pingpong"
: > "$out/runs.log"
for ((r = 1; r <= runs; r++)); do
  mpirun.openmpi -n 2 "$out/pingpong" | sed 's/^/single-copy /' >> "$out/runs.log"
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_smsc='^cma,knem,xpmem' \
    mpirun.openmpi -n 2 "$out/pingpong" | sed 's/^/off         /' >> "$out/runs.log"
done
for mode in single-copy off; do
  for size in 4096 65536 1048576 4194304; do
    grep "^$mode *$size B" "$out/runs.log" | awk '{print $4}' | sort -n |
      awk -v m="$mode" -v s="$size" '{a[NR] = $1} END {
        printf "%-11s %8d B: median %8.2f us one-way (min %.2f, max %.2f, %d runs)\n",
          m, s, a[int((NR + 1) / 2)], a[1], a[NR], NR }'
  done
done
