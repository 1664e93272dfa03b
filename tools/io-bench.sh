#!/usr/bin/env bash
# Parallel I/O against C: for each MPI, benches/c/file_io.c (plain C, built with the MPI's
# mpicc) and its twin through ferrompi (benches/file_io.rs) write a distributed array of MIB
# MiB (1024 by default) to one file and read it back, collectively (write_at_all, read_at_all)
# and independently (write_at, read_at), at 1, 2, 3 and 4 processes, in interleaved rounds (C
# then ferrompi, the next round ferrompi then C), each run timing every operation INNER times
# after an untimed write that makes the file. The file lives in DIR (default: the system's
# temporary directory) and stays in the page cache: the figures are what the MPI and the
# binding add to moving the bytes, not the disk's speed. Raw lines go to
# target/bench/file-io-<impl>.raw; tools/io-table.py makes the table from them.
#
#   tools/io-bench.sh                        # Debian's Open MPI and MPICH, 3 rounds of 2
#   ROUNDS=5 MIB=256 RANKS="2 4" tools/io-bench.sh mpich5
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
rounds=${ROUNDS:-3}
inner=${INNER:-2}
mib=${MIB:-1024}
read -r -a ranks_list <<< "${RANKS:-1 2 3 4}"
dir=${DIR:-${TMPDIR:-/tmp}}
out_dir="${FERROMPI_BENCH_DIR:-$ROOT/target/bench}"
mkdir -p "$out_dir"
file="$dir/ferrompi-io-bench-$$.bin"
trap 'rm -f "$file"' EXIT
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  exe=$(cargo bench --locked --bench file_io --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  c_exe="$CARGO_TARGET_DIR/file-io-c"
  $MPICC -O2 -Wno-stringop-overflow -o "$c_exe" benches/c/file_io.c
  raw="$out_dir/file-io-$impl.raw"
  echo "# mib $mib" > "$raw"
  echo "== $impl: $rounds rounds of C and ferrompi, $mib MiB, at ${ranks_list[*]} processes, in $dir"
  for ((round = 0; round < rounds; round++)); do
    bindings=(c ferrompi)
    ((round % 2 == 0)) || bindings=(ferrompi c)
    for ranks in "${ranks_list[@]}"; do
      launcher=$(launcher_for "$ranks")
      for binding in "${bindings[@]}"; do
        program=$c_exe
        [[ $binding == c ]] || program=$exe
        rm -f "$file"
        # shellcheck disable=SC2086 # the launcher and its options
        timeout 600 $launcher -n "$ranks" "$program" "$file" "$mib" "$inner" < /dev/null \
          | sed "s/^/$round $binding $ranks $(launch_mode "$ranks") /" >> "$raw" \
          || { echo "io-bench: $binding at $ranks processes failed on $impl" >&2; exit 1; }
      done
    done
  done
  python3 tools/io-table.py "$raw" "$impl" > "$out_dir/file-io-$impl.md"
  cat "$out_dir/file-io-$impl.md"
done
