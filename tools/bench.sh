#!/usr/bin/env bash
# The comparison with C, in one command: for Open MPI and MPICH in turn, runs
# benches/comparison.rs under the launcher with 2 ranks (point-to-point and collectives) and
# 4 ranks (collectives), and 8 and 16 where the cores are, oversubscribing only when the ranks
# exceed the cores (launcher_for in tools/launch.sh; the report names each run's mode). Rank 0
# drives criterion; the C reference runs in the same binary. Each run writes
# target/bench/<impl>-n<ranks>.{md,csv}; then benches/report (a package of its own) combines them into target/bench/report.md with the ratio table and log-log plots per
# operation against size and ranks (plotters; SVG and PNG). Per MPI it then runs
# tools/thread-levels.sh (separate plain-C and ferrompi programs at every thread level),
# tools/call-form.sh (C's call into libmpi through the PLT against the GOT, rustc's form),
# benches/request_cost.rs (the binding's cost per request, on one process) and
# tools/instruction-cost.sh (the binding's own instructions per request and per put/get, by
# callgrind: the same on every run).
#
#   tools/bench.sh                # everything (26-34 minutes on 2 cores)
#   RANKS="2 4 8 16" tools/bench.sh   # the rank counts (default 2, 4; 8, 16 where the cores are)
#   tools/bench.sh mpich          # one implementation
#   QUICK=1 tools/bench.sh        # each benchmark once (criterion --test): checks that it runs
#                                 # (into target/bench-quick, apart from real reports)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
# A QUICK run (tools/test.sh's check that everything runs) writes elsewhere, so that its
# one-iteration numbers never join a real report.
out_dir="$ROOT/target/bench${QUICK:+-quick}"
mkdir -p "$out_dir"
mapfile -t ranks_list < <(rank_counts)
mode=(--bench)
[[ -z "${QUICK:-}" ]] || mode=(--bench --test)
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  rm -f "$out_dir/$impl-"*
  exe=$(cargo bench --locked --bench comparison --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  for ranks in "${ranks_list[@]}"; do
    run_comparison "$exe" "$impl" "$ranks" "$out_dir" "${mode[@]}"
  done
  # The same small operations as separate plain-C and ferrompi programs at every thread level
  # (one round when QUICK): its table joins the report.
  rounds=12
  [[ -z "${QUICK:-}" ]] || rounds=1
  FERROMPI_BENCH_DIR="$out_dir" ROUNDS=$rounds bash "$ROOT/tools/thread-levels.sh" "$impl" > "$out_dir/thread-levels-$impl.log" 2>&1 \
    || { echo "thread levels failed on $impl:" >&2; tail -n 40 "$out_dir/thread-levels-$impl.log" >&2; exit 1; }
  # What C's default call into libmpi (through the PLT) saves against rustc's (through the GOT),
  # which the comparison's C reference is built to make: its table joins the report.
  form_rounds=41
  [[ -z "${QUICK:-}" ]] || form_rounds=1
  ROUNDS=$form_rounds FERROMPI_BENCH_DIR="$out_dir" bash "$ROOT/tools/call-form.sh" "$impl" > "$out_dir/call-form-$impl.log" 2>&1 \
    || { echo "call forms failed on $impl:" >&2; tail -n 40 "$out_dir/call-form-$impl.log" >&2; exit 1; }
  # The binding's own cost per request, on one process (no second rank's timing in it).
  echo "== $impl: request cost on one process -> $out_dir/request-cost-$impl.txt"
  for level in single funneled; do
    cargo bench --locked --bench request_cost -- "$level" ${QUICK:+--test} 2>/dev/null | tail -n 1 \
      || { echo "request cost failed on $impl at $level" >&2; exit 1; }
  done > "$out_dir/request-cost-$impl.txt"
  # The binding's own instructions per request and per put/get (callgrind; the same every run).
  if [[ -n ${QUICK:-} ]]; then
    cargo bench --locked --bench instruction_cost -- --test > /dev/null 2>&1 \
      || { echo "instruction cost failed on $impl" >&2; exit 1; }
  else
    echo "== $impl: the binding's own instructions per operation -> $out_dir/instruction-cost-$impl.txt"
    bash "$ROOT/tools/instruction-cost.sh" "$impl" > "$out_dir/instruction-cost-$impl.txt" 2>&1 \
      || { echo "instruction cost failed on $impl:" >&2; cat "$out_dir/instruction-cost-$impl.txt" >&2; exit 1; }
  fi
done
FERROMPI_BENCH_DIR="$out_dir" cargo run --locked --release -p ferrompi-bench-report > "$out_dir/report.log" 2>&1 \
  || { echo "report failed:" >&2; cat "$out_dir/report.log" >&2; exit 1; }
echo "== report: $out_dir/report.md (plots: $out_dir/*.svg, *.png)"
cat "$out_dir/report.md"
for impl in "${impls[@]}"; do
  echo "request cost on one process, $impl:"
  cat "$out_dir/request-cost-$impl.txt"
  [[ -n ${QUICK:-} ]] || tail -n 11 "$out_dir/instruction-cost-$impl.txt"
done
