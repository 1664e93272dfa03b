#!/usr/bin/env bash
# Runs, on a machine with an NVIDIA GPU and driver, what a pack made by
# `GPU=1 tools/bench-pack.sh` holds for it, for each implementation of the pack:
#
#   - the multi-rank harness's `device` program at 2, 3 and 4 ranks with FERROMPI_EXPECT_GPU=1:
#     every DeviceComm call on the GPU's memory, staged, and direct where the MPI takes it,
#     checked against the host results;
#   - examples/topk_sparse_allreduce --gpu at 2, 3 and 4 ranks: the dense allreduce and the
#     pairs' allgatherv on the GPU equal to the host's, and both paths' time per iteration.
#
#   DIR/tools/gpu-run.sh OUT     # OUT/gpu.log gets everything
set -euo pipefail
pack="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$pack/tools/launch.sh"
out=${1:?usage: gpu-run.sh OUT}
mkdir -p "$out"
[[ $(id -u) -ne 0 ]] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
site_libraries=${LD_LIBRARY_PATH:-}
failed=0
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  for impl in ${IMPLS:-$(cat "$pack/impls")}; do
    pack_mpi "$pack" "$impl" "$site_libraries"
    for n in 2 3 4; do
      echo "== $impl, $n ranks: the device program on the GPU"
      # shellcheck disable=SC2086 # the launcher and its options
      FERROMPI_EXPECT_GPU=1 timeout 120 $MPIEXEC -n "$n" "$pack/bin/harness-$impl" --program device \
        || { echo "FAILED: $impl device program at $n ranks"; failed=1; }
      echo "== $impl, $n ranks: topk_sparse_allreduce --gpu"
      # shellcheck disable=SC2086
      timeout 120 $MPIEXEC -n "$n" "$pack/bin/topk-$impl" --gpu \
        || { echo "FAILED: $impl topk_sparse_allreduce at $n ranks"; failed=1; }
    done
  done
} 2>&1 | tee "$out/gpu.log"
grep -q '^FAILED' "$out/gpu.log" && failed=1
exit "$failed"
