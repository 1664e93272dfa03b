#!/usr/bin/env bash
# What each thread level costs a plain C program, and what ferrompi adds at the same level: for
# each MPI, benches/c/levels.c (a C program built on its own with the MPI's mpicc: MPI_Init, or
# MPI_Init_thread at each level) and its twin through ferrompi (benches/levels.rs) run the same
# operations under the launcher with 2 ranks (dedicated cores, no --oversubscribe), in
# interleaved rounds: C init, ferrompi init (Mpi::init()), then C and ferrompi at single,
# funneled, serialized, multiple; the next round in reverse (ferrompi before C, from multiple
# down to init), and so on. Per operation it reports median times and the
# medians of the per-round paired differences: each level against plain MPI_Init (C), and
# ferrompi against C at the same level. Tables go to target/bench/thread-levels-<impl>.md (or
# $FERROMPI_BENCH_DIR, which tools/bench.sh sets).
#
#   tools/thread-levels.sh                      # Debian's Open MPI and MPICH, 5 rounds
#   ROUNDS=9 tools/thread-levels.sh openmpi5    # any of tools/setup.sh's implementations
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
rounds=${ROUNDS:-5}
out_dir="${FERROMPI_BENCH_DIR:-$ROOT/target/bench}"
mkdir -p "$out_dir"
levels=(init single funneled serialized multiple)
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  exe=$(cargo bench --locked --bench levels --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  c_exe="$CARGO_TARGET_DIR/levels-c"
  # (-Wno-stringop-overflow: gcc 12 misreads MPICH's MPI_STATUSES_IGNORE as a zero-length array.)
  $MPICC -O2 -Wno-stringop-overflow -o "$c_exe" benches/c/levels.c
  launcher=$(launcher_for 2)
  raw="$out_dir/thread-levels-$impl.raw"
  : > "$raw"
  echo "== $impl: $rounds rounds of C and ferrompi at ${levels[*]} under $launcher -n 2 ($(launch_mode 2))"
  for ((round = 0; round < rounds; round++)); do
    # Every other round runs in reverse (levels from multiple down, ferrompi before C), so that
    # neither a binding nor a level always has the same place in a round.
    order=("${levels[@]}") bindings=(c ferrompi)
    if ((round % 2)); then
      order=() bindings=(ferrompi c)
      for ((i = ${#levels[@]} - 1; i >= 0; i--)); do order+=("${levels[i]}"); done
    fi
    for level in "${order[@]}"; do
      for binding in "${bindings[@]}"; do
        program=$c_exe
        [[ $binding == c ]] || program=$exe
        # shellcheck disable=SC2086 # the launcher and its options
        timeout 120 $launcher -n 2 "$program" "$level" 21 < /dev/null \
          | sed "s/^/$round $binding $level /" >> "$raw" \
          || { echo "thread-levels: $binding at $level failed on $impl" >&2; exit 1; }
      done
    done
  done
  python3 - "$raw" "$impl" "$(launch_mode 2)" > "$out_dir/thread-levels-$impl.md" <<'PY'
import sys, statistics as st
raw, impl, mode = sys.argv[1:4]
t, provided = {}, {}
for line in open(raw):
    r, b, level, key, value = line.split()
    if key == "provided":
        provided[(b, level)] = value
    else:
        t.setdefault((b, level, key), {})[int(r)] = float(value)
ops = ["pingpong8", "allreduce8", "barrier", "exchange8", "window64"]
levels = ["init", "single", "funneled", "serialized", "multiple"]
def paired(a, b):
    return st.median(a[r] - b[r] for r in a if r in b)
print(f"### {impl}: nanoseconds per operation, 2 ranks ({mode}), medians of {len(t[('c','init','barrier')])} interleaved rounds\n")
print("Levels provided: " + ", ".join(f"{l}: C {provided.get(('c', l), '?')}, ferrompi {provided.get(('ferrompi', l), '?')}" for l in levels) + ".\n")
print("| operation | C MPI_Init | " + " | ".join(f"C {l} − C MPI_Init" for l in levels[1:]) + " | " + " | ".join(f"ferrompi {l} − C {l}" for l in levels) + " |")
print("|---|" + "---:|" * (1 + 2 * len(levels) - 1))
for op in ops:
    base = t[("c", "init", op)]
    cells = [f"{st.median(base.values()):.0f}"]
    cells += [f"{paired(t[('c', l, op)], base):+.0f}" for l in levels[1:]]
    cells += [f"{paired(t[('ferrompi', l, op)], t[('c', l, op)]):+.0f} ({st.median(t[('ferrompi', l, op)].values()) / st.median(t[('c', l, op)].values()):.3f})" for l in levels]
    print("| " + op + " | " + " | ".join(cells) + " |")
print("\n(ferrompi cells: the median paired difference in ns, and in brackets the ratio of the medians; "
      "`init` on the ferrompi side is `Mpi::init()`.)")
PY
  cat "$out_dir/thread-levels-$impl.md"
done
