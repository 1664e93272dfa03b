#!/usr/bin/env bash
# The comparison's A/A control: how far from 1 the harness puts a ratio when both sides are
# the same code. benches/comparison.rs with FERROMPI_BENCH_NULL=1 measures every row's C side
# against itself, through the same interleaved quartets and median, at 2 ranks; a binding that
# added nothing would land where these ratios do. Each run writes
# target/bench-null/<impl>-n2-run<k>.{md,csv}; then it counts, per MPI, the rows over target in
# each run and in every run (window creation rows, which allocate by design, left out).
#
#   tools/bench-null.sh              # Debian's Open MPI and MPICH, two runs each (about 10 minutes)
#   RUNS=3 tools/bench-null.sh mpich # one implementation, three runs
#   QUICK=1 tools/bench-null.sh      # one run, each benchmark once: checks that it runs
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
runs=${RUNS:-2}
mode=(--bench)
if [[ -n ${QUICK:-} ]]; then
  runs=1
  mode=(--bench --test)
fi
out_dir="$ROOT/target/bench-null${QUICK:+-quick}"
mkdir -p "$out_dir"
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  rm -f "$out_dir/$impl-"*
  exe=$(cargo bench --locked --bench comparison --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [[ -x $exe ]] || { echo "the comparison did not build for $impl" >&2; exit 1; }
  for run in $(seq 1 "$runs"); do
    FERROMPI_BENCH_NULL=1 run_comparison "$exe" "$impl" 2 "$out_dir" "${mode[@]}"
    for ext in md csv log; do
      mv "$out_dir/$impl-n2.$ext" "$out_dir/$impl-n2-run$run.$ext"
    done
  done
done

# Per MPI: rows over target in each run, and those over in every run.
python3 - "$out_dir" "${impls[@]}" <<'EOF'
import csv, sys, glob
out_dir, impls = sys.argv[1], sys.argv[2:]
for impl in impls:
    runs = sorted(glob.glob(f"{out_dir}/{impl}-n2-run*.csv"))
    if not runs:
        sys.exit(f"no A/A run for {impl}")
    over_sets, rows = [], 0
    for path in runs:
        table = [r for r in csv.DictReader(open(path)) if r["group"] != "shared_alloc"]
        if not table:
            sys.exit(f"{path}: no rows")
        rows = len(table)
        ratios = [float(r["ratio"]) for r in table]
        over = {(r["operation"], r["bytes"]): float(r["ratio"])
                for r in table if float(r["ratio"]) > float(r["target"])}
        over_sets.append(over)
        spread = sorted(abs(x - 1) for x in ratios)
        print(f"{impl}, A/A run {len(over_sets)}: {len(over)} of {rows} rows over target; "
              f"|ratio - 1| median {spread[len(spread) // 2]:.3f}, largest {spread[-1]:.3f}")
        for (op, size), ratio in sorted(over.items()):
            print(f"    {op} {size} B: {ratio:.3f}")
    every = set.intersection(*(set(o) for o in over_sets))
    print(f"{impl}: over target in all {len(runs)} A/A runs: {len(every)} of {rows}"
          + "".join(f"\n    {op} {size} B" for op, size in sorted(every)))
EOF
