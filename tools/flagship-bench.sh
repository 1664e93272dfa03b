#!/usr/bin/env bash
# The flagship's speed, in one run: today's solver (HiGHS, stage LPs kept and warm-started)
# against the last one that rebuilt every stage LP for an interior-point solver (Clarabel),
# built from git at BEFORE (default: the parent of the commit that replaced Clarabel), on the
# default instance for ITERATIONS iterations (20; neither stops early), at 1 rank, in ROUNDS
# interleaved rounds (3). Then today's solver alone: the LP solve times at 0, 100, 200 and 400
# cuts (--lp-times, 50 iterations), and the MPI share at 1, 2 and 4 ranks on the default
# instance and at scale (--scenarios 1000 --stages 24 --reservoirs 3, 20 iterations; 4 ranks oversubscribe 2
# cores). Raw JSON lines go to target/bench/flagship-<impl>.raw; tools/flagship-table.py makes
# the tables from them.
#
#   tools/flagship-bench.sh                 # Debian's Open MPI
#   ROUNDS=5 tools/flagship-bench.sh mpich
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impl=${1:-openmpi}
rounds=${ROUNDS:-3}
iterations=${ITERATIONS:-20}
before=${BEFORE:-$(git log -1 --format=%H -S'clarabel = "0.11"' -- examples/sddp/Cargo.toml)^}
out_dir="${FERROMPI_BENCH_DIR:-$ROOT/target/bench}"
mkdir -p "$out_dir"
mpi_env "$impl"
export CARGO_TARGET_DIR="$ROOT/target/flagship"
cargo build --release --locked -p ferrompi-sddp -q
now="$CARGO_TARGET_DIR/release/sddp"
old_tree="$ROOT/target/flagship-before/src"
if [[ ! -d $old_tree ]]; then
  git worktree add --detach "$old_tree" "$before" > /dev/null
fi
(cd "$old_tree" && git checkout -q --detach "$before" &&
  CARGO_TARGET_DIR="$ROOT/target/flagship-before/target" cargo build --release --locked -p ferrompi-sddp -q)
old="$ROOT/target/flagship-before/target/release/sddp"
raw="$out_dir/flagship-$impl.raw"
: > "$raw"
# run LABEL RANKS PROGRAM ARGS...: one JSON line, labelled.
run() {
  local label=$1 ranks=$2
  shift 2
  local launcher
  launcher=$(launcher_for "$ranks")
  # shellcheck disable=SC2086 # the launcher and its options
  timeout 1200 $launcher -n "$ranks" "$@" --json --quiet < /dev/null | tail -n 1 \
    | sed "s/^{/{\"run\":\"$label\",\"mode\":\"$(launch_mode "$ranks")\",\"impl\":\"$impl\",/" >> "$raw"
}
echo "== $impl: $rounds interleaved rounds, $iterations iterations of the default instance at 1 rank"
for ((round = 0; round < rounds; round++)); do
  if ((round % 2 == 0)); then
    run before 1 "$old" --iterations "$iterations" --tol -1
    run now 1 "$now" --iterations "$iterations" --stop limit
  else
    run now 1 "$now" --iterations "$iterations" --stop limit
    run before 1 "$old" --iterations "$iterations" --tol -1
  fi
done
echo "== LP solve times by cuts (50 iterations, 1 rank)"
# shellcheck disable=SC2046 # the launcher and its options
timeout 600 $(launcher_for 1) -n 1 "$now" --iterations 50 --stop limit --lp-times --quiet < /dev/null \
  | sed 's/^/# /' >> "$raw"
echo "== the MPI share at 1, 2 and 4 ranks: the default instance, then at scale"
for ranks in 1 2 4; do
  run default "$ranks" "$now"
done
for ranks in 1 2 4; do
  run scale "$ranks" "$now" --scenarios 1000 --stages 24 --reservoirs 3 --iterations 20
done
python3 tools/flagship-table.py "$raw" > "$out_dir/flagship-$impl.md"
cat "$out_dir/flagship-$impl.md"
