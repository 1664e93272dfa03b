#!/usr/bin/env bash
# The binding's own instructions per operation, counted by callgrind: a measure that is the
# same on every run, unlike timings on a shared machine. For each path of benches/instruction_cost.rs
# (a ferrompi path and its ffi twin) it runs the path in a singleton under
# `valgrind --tool=callgrind` at two iteration counts and sums the instructions executed in the
# program's own code (ferrompi is inlined into it; MPI's libraries are not counted). The
# per-iteration difference between the two counts, ferrompi path minus ffi path, divided by the
# operations per iteration, is what ferrompi adds to each operation. Beside it, what rsmpi adds
# to the same operation (benches/rsmpi, counted the same way), on Debian's MPIs.
#
# Every row has a ceiling: the target and a small margin. A row over its ceiling, or above
# rsmpi's count, fails the run (the test suite runs it), so a change that adds instructions
# to a hot path is caught when it is made. Under a minute per MPI once built: one callgrind run
# per core, each over a share of the paths.
#
#   tools/instruction-cost.sh                 # Debian's Open MPI and MPICH
#   tools/instruction-cost.sh mpich openmpi5  # these (any of tools/setup.sh's mpi_env names)
#   ONLY="send-recv allreduce" tools/instruction-cost.sh   # only these paths
#   BREAKDOWN=1 tools/instruction-cost.sh     # and where each row's instructions go
#                                             # (tools/instruction-breakdown.py)
#   CEILINGS=0 tools/instruction-cost.sh      # report only; RSMPI=0: without rsmpi's column
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
low=${LOW:-500}
high=${HIGH:-1500}
out_dir="$ROOT/target/instruction-cost"
mkdir -p "$out_dir"

# Instructions executed in OBJECT's own code, from a callgrind output file (the self cost of
# every function whose object is OBJECT; tools/instruction-breakdown.py reads the format).
own_instructions() { # own_instructions CALLGRIND_OUT OBJECT
  python3 "$ROOT/tools/instruction-breakdown.py" --total "$1" "$2"
}

# Each row: path|what one operation is|operations per iteration|ceiling. The ceiling is the
# most instructions per operation ferrompi may add over its `ffi` twin on any MPI measured:
# the most it adds now on one of them and a margin of about 3 (docs/performance.md has the
# targets, and the rows that miss them and why). A row above its ceiling fails the run
# (CEILINGS=0: report only).
rows=(
  "pair|set of 2 (irecv + isend + wait_all), per request|2|58"
  "pair-shared|set of 2 reused in one scope (irecv + isend + wait_all + clear), per request|2|42"
  "exchange|set of 16 (8 irecv + 8 isend + wait_all), per request|16|32"
  "exchange-into|set of 16, started into the set (*_into), per request|16|30"
  "isend|isend + wait|1|25"
  "isend-scope|isend + wait, in a scope of its own|1|43"
  "issend|issend + wait|1|25"
  "irecv|irecv + wait|1|25"
  "irecv-test|irecv + test until complete|1|30"
  "isend-owned|isend_owned + wait (the vector moves in and back)|1|45"
  "irecv-owned|irecv_owned + wait (the vector moves in and back)|1|50"
  "send-init|persistent send: start + wait|1|30"
  "recv-init|persistent receive: start + wait|1|33"
  "allreduce-init|persistent allreduce 8 B: start + wait|1|25"
  "iallreduce|iallreduce 8 B + wait|1|24"
  "ibarrier|ibarrier + wait|1|22"
  "ibcast|ibcast 8 B + wait|1|29"
  "put|put_now 8 B (put + flush)|1|20"
  "get|get_now 8 B (get + flush_local)|1|20"
  "put-target|put_now 8 B through epoch.target(rank)|1|6"
  "get-target|get_now 8 B through epoch.target(rank)|1|6"
  "fetch-and-op|fetch_and_op u64 (fetch_and_op + flush)|1|21"
  "fetch-and-op-target|fetch_and_op u64 through epoch.target(rank)|1|6"
  "allreduce|allreduce 8 B (blocking)|1|11"
  "allreduce-in-place|allreduce_in_place 8 B (blocking)|1|12"
  "bcast|bcast 8 B (blocking)|1|11"
  "bcast-struct|bcast of one derived struct (blocking; its datatype in a static)|1|12"
  "send-struct|send of one derived struct (blocking; its datatype in a static)|1|13"
  "bcast-generic|bcast of one generic derived struct (its datatype in the table)|1|32"
  "alltoall|alltoall 8 B per pair (blocking)|1|11"
  "allgatherv|allgatherv 8 B per rank (blocking)|1|31"
  "neighbor-alltoall|neighbor_alltoall 8 B per neighbour (blocking, 2 neighbours)|1|30"
  "neighbor-alltoallw|neighbor_alltoallw of two 8-byte layouts (blocking, 2 neighbours)|1|24"
  "neighbor-init|persistent neighbor_alltoall 8 B per neighbour: start + wait (twin: ineighbor_alltoall + wait)|1|16"
  "sendrecv|sendrecv 8 B (with its status)|1|20"
  "send-recv|send + recv 8 B, per call (blocking; C ignores the status)|2|12"
  "shared-alloc|SharedWindow of 4 KiB per rank allocated and freed|1|1300"
)
# The rows rsmpi (crate `mpi`) has too: benches/rsmpi counts them the same way, beside its own
# `ffi` twins (RSMPI=0 leaves them out; not on the wheels' MPIs, which rsmpi's build cannot find).
rsmpi_paths=" pair exchange isend isend-scope issend irecv irecv-test iallreduce ibarrier ibcast sendrecv "
# The row allowed above rsmpi, for checks rsmpi does not make (docs/performance.md): ferrompi's
# `ibarrier` tests the scope's thread-gate pass at its start and its wait, counts itself in the
# scope, reads the checked-collectives switch and tests both return codes; rsmpi's
# `immediate_barrier` has no scope and ignores the return codes.
rsmpi_above=" ibarrier "
over=0
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  if [[ ${BREAKDOWN:-0} == 1 ]]; then
    # Line tables, for tools/instruction-breakdown.py: the same code, in a target of its own.
    export CARGO_PROFILE_BENCH_DEBUG=line-tables-only CARGO_TARGET_DIR="$CARGO_TARGET_DIR-lines"
  fi
  exe=$(cargo bench --locked --bench instruction_cost --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1) || true
  if [[ ! -x $exe ]]; then
    echo "instruction-cost: benches/instruction_cost.rs did not build for $impl:" >&2
    cargo bench --locked --bench instruction_cost --no-run 2>&1 | tail -n 30 >&2
    exit 1
  fi
  rsmpi=""
  if [[ ${RSMPI:-1} == 1 && $impl != *5* ]]; then
    # rsmpi's mpi-sys runs bindgen: libclang stays visible (`command cargo`), MPICC names the MPI.
    (cd "$ROOT/benches/rsmpi" && CARGO_TARGET_DIR="$ROOT/target/rsmpi-$impl" \
      command cargo build --locked --release --quiet) \
      || { echo "instruction-cost: rsmpi's side did not build for $impl (RSMPI=0 leaves it out)" >&2; exit 1; }
    rsmpi="$ROOT/target/rsmpi-$impl/release/rsmpi-instruction-cost"
  fi
  chosen=()
  for row in "${rows[@]}"; do
    IFS='|' read -r path _ <<< "$row"
    [[ -z ${ONLY:-} || " $ONLY " == *" $path "* ]] && chosen+=("$row")
  done
  # Every count first: a few singleton processes under callgrind, one per core at a time, each
  # running its share of the paths, every path three times (once to warm up, then at the two
  # iteration counts). The program calls ferrompi_cost_mark after each run, where callgrind
  # dumps the counts since the last dump (--dump-after): dump 3k+2 is the k-th path's low run,
  # 3k+3 its high run, renamed here to SIDE-PATH-ITERATIONS.out.
  {
    shares=() rsmpi_share=""
    i=0
    for row in "${chosen[@]}"; do
      IFS='|' read -r path _ <<< "$row"
      for variant in "$path" "$path-ffi"; do
        shares[i % $(nproc)]+=" $variant"
        i=$((i + 1))
        if [[ -n $rsmpi && $rsmpi_paths == *" $path "* ]]; then rsmpi_share+=" $variant"; fi
      done
    done
    for i in "${!shares[@]}"; do echo "ferrompi $exe $i${shares[i]}"; done
    if [[ -n $rsmpi_share ]]; then echo "rsmpi $rsmpi 0$rsmpi_share"; fi
  } | xargs -P "$(nproc)" -L 1 sh -c '
    out_dir=$0 impl=$1 low=$2 high=$3 side=$4 exe=$5 share=$6
    shift 6
    base="$out_dir/$impl-$side-share$share"
    rm -f "$base".out*
    valgrind --tool=callgrind --dump-after=ferrompi_cost_mark --callgrind-out-file="$base.out" \
      "$exe" phases "$low" "$high" "$@" > "$base.log" 2>&1 \
      || { echo "$side: $* failed on $impl:" >&2; tail -n 20 "$base.log" >&2; exit 255; }
    k=0
    for variant in "$@"; do
      mv "$base.out.$((3 * k + 2))" "$out_dir/$impl-$side-$variant-$low.out"
      mv "$base.out.$((3 * k + 3))" "$out_dir/$impl-$side-$variant-$high.out"
      k=$((k + 1))
    done
  ' "$out_dir" "$impl" "$low" "$high" 2>&1 \
    | sed 's/^/  /' >&2 || { echo "instruction-cost: a run failed on $impl" >&2; exit 1; }
  # own SIDE PROGRAM PATH OPS: instructions per operation beyond the path's `ffi` twin.
  own() {
    local side=$1 object counts per_op=() variant n
    object=$(readlink -f "$2")
    for variant in "$3" "$3-ffi"; do
      counts=()
      for n in "$low" "$high"; do
        counts+=("$(own_instructions "$out_dir/$impl-$side-$variant-$n.out" "$object")")
      done
      per_op+=("$(awk -v a="${counts[0]}" -v b="${counts[1]}" -v n=$(((high - low) * $4)) \
        'BEGIN { print (b - a) / n }')")
    done
    echo "${per_op[0]} ${per_op[1]}"
  }
  {
    echo "$impl: instructions in the program's own code per operation: ferrompi's path and its ffi twin, what ferrompi adds, what rsmpi adds, the ceiling"
    for row in "${chosen[@]}"; do
      IFS='|' read -r path what ops ceiling <<< "$row"
      read -r f c <<< "$(own ferrompi "$exe" "$path" "$ops")"
      r=""
      if [[ -n $rsmpi && $rsmpi_paths == *" $path "* ]]; then
        read -r rf rc <<< "$(own rsmpi "$rsmpi" "$path" "$ops")"
        r=$(awk -v a="$rf" -v b="$rc" 'BEGIN { print a - b }')
      fi
      allowed=0
      [[ $rsmpi_above == *" $path "* ]] && allowed=1
      awk -v what="$what" -v f="$f" -v c="$c" -v r="$r" -v ceiling="$ceiling" -v allowed="$allowed" 'BEGIN {
        own = f - c; above = (r != "" && own > r + 0.05 && !allowed)
        over = (own > ceiling + 0.05 || above) ? "  OVER" : ""
        printf "  %-58s %6.1f %6.1f %+6.1f %7s  <= %d%s\n", what ":", f, c, own,
          (r == "" ? "-" : sprintf("%+.1f", r)), ceiling, over }'
      if [[ ${BREAKDOWN:-0} == 1 ]]; then
        echo "      $(python3 "$ROOT/tools/instruction-breakdown.py" "$(readlink -f "$exe")" "$ROOT" \
          "$ops" "$low" "$high" "$out_dir/$impl-ferrompi-$path-"{"$low","$high"}.out \
          "$out_dir/$impl-ferrompi-$path-ffi-"{"$low","$high"}.out)"
      fi
    done
  } | tee "$out_dir/$impl.txt"
  grep -q ' OVER$' "$out_dir/$impl.txt" && over=1
done
if ((over)) && [[ ${CEILINGS:-1} == 1 ]]; then
  echo "instruction-cost: a row is over its ceiling or above rsmpi (OVER): ferrompi's path got more instructions" >&2
  exit 1
fi
