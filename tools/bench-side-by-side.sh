#!/usr/bin/env bash
# One full run of a pack (tools/bench-pack.sh) on a machine with cores to spare, in the time of
# one implementation's: every implementation of the pack at 2 ranks, side by side, and at 4
# ranks beside them when there are cores for all, each rank bound to a physical core of its own
# (bench-run.sh's CPUS). The jobs share the caches and memory bandwidth but no core; both sides
# of a row run in one job's quartets. Then OUT holds what bench-run.sh writes, for the report:
#
#   DIR/tools/bench-side-by-side.sh OUT     # there
#   FERROMPI_BENCH_DIR=OUT cargo run --release -p ferrompi-bench-report   # here
#
#   FREE_CPUS="1 2 3 4"   the CPUs to use, in order (default: one per physical core, CPU 0's
#                         core left free for the system)
#   TWO_ONLY=1            only the 2-rank jobs
# Other settings (QUICK, FERROMPI_BENCH_ONLY, ...) pass on to bench-run.sh.
set -euo pipefail
pack="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out=${1:?usage: bench-side-by-side.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
read -ra impls < "$pack/impls"

# One CPU per physical core, in CPU order, CPU 0's core left out.
if [[ -n ${FREE_CPUS:-} ]]; then
  read -ra cpus <<< "$FREE_CPUS"
else
  mapfile -t cpus < <(for c in /sys/devices/system/cpu/cpu[0-9]*; do
      n=${c##*cpu}
      echo "$n $(cat "$c/topology/physical_package_id" 2>/dev/null || echo 0)-$(cat "$c/topology/core_id" 2>/dev/null || echo "$n")"
    done | sort -n | awk '!seen[$2]++ {print $1}' | tail -n +2)
fi
jobs=()
for impl in "${impls[@]}"; do jobs+=("$impl 2"); done
need=$((2 * ${#impls[@]}))
if [[ -z ${TWO_ONLY:-} ]] && ((${#cpus[@]} >= 6 * ${#impls[@]})); then
  for impl in "${impls[@]}"; do jobs+=("$impl 4"); done
  need=$((6 * ${#impls[@]}))
fi
((${#cpus[@]} >= need)) || {
  echo "bench-side-by-side: ${#cpus[@]} free cores (${cpus[*]:-none}), $need needed; run bench-run.sh instead" >&2
  exit 1
}
{ date -u; lscpu 2>/dev/null || nproc; } > "$out/topology.txt"
echo "cores used: ${cpus[*]:0:need}" | tee -a "$out/topology.txt"

SECONDS=0
next=0
pids=()
for job in "${jobs[@]}"; do
  read -r impl ranks <<< "$job"
  list=$(IFS=,; echo "${cpus[*]:next:ranks}")
  next=$((next + ranks))
  IMPLS=$impl RANKS=$ranks CPUS=$list "$pack/tools/bench-run.sh" "$out/jobs/$impl-n$ranks" \
    > "$out/jobs-$impl-n$ranks.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { failed=1; echo "${jobs[$i]} ranks failed:" >&2; tail -n 20 "$out/jobs-${jobs[$i]/ /-n}.log" >&2; }
done
((failed == 0)) || exit 1

# One folder for the report: every job's tables and logs, one machine.txt.
cp "$out"/jobs/*/*.{md,csv,log} "$out/"
{
  head -n 1 "$out/jobs/${impls[0]}-n2/machine.txt"
  for f in "$out"/jobs/*/machine.txt; do sed 1d "$f"; done | sort -u
} > "$out/machine.txt"
echo "== done in ${SECONDS} s: $out"
cat "$out/machine.txt"
