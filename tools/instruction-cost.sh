#!/usr/bin/env bash
# The binding's own instructions per operation, counted by callgrind: a measure that is the
# same on every run, unlike timings on a shared machine. For each path of benches/instruction_cost.rs
# (a ferrompi path and its ffi twin) it runs the program as a singleton under
# `valgrind --tool=callgrind` at two iteration counts and sums the instructions executed in the
# program's own code (ferrompi is inlined into it; MPI's libraries are not counted). The
# per-iteration difference between the two counts, ferrompi path minus ffi path, divided by the
# operations per iteration, is what ferrompi adds to each operation. About a minute per MPI.
#
#   tools/instruction-cost.sh                 # Debian's Open MPI and MPICH
#   tools/instruction-cost.sh mpich           # one of them
#   ONLY="send-recv allreduce" tools/instruction-cost.sh   # only these paths
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
low=${LOW:-500}
high=${HIGH:-1500}
out_dir="$ROOT/target/instruction-cost"
mkdir -p "$out_dir"

# Instructions executed in OBJECT's own code, from a callgrind output file: the self cost of
# every function whose object is OBJECT (cost lines after a `calls=` line are the callee's
# inclusive cost and are skipped).
own_instructions() { # own_instructions CALLGRIND_OUT OBJECT
  python3 - "$1" "$2" <<'EOF'
import re, sys
path, wanted = sys.argv[1], sys.argv[2]
names, current, total, skip = {}, None, 0, False
for line in open(path):
    # An object's name comes with its first mention, in `ob=` or a call's `cob=`.
    if line.startswith(("ob=", "cob=")):
        m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
        if m and m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        if line.startswith("ob="):
            current = names.get(m.group(1)) if m else line[3:].rstrip("\n")
    elif line.startswith("calls="):
        skip = True
    elif line[:1].isdigit() or line[:1] in "+-*":
        if skip:
            skip = False
        elif current == wanted:
            parts = line.split()
            if len(parts) > 1:
                total += int(parts[1])
print(total)
EOF
}

for impl in "${impls[@]}"; do
  mpi_env "$impl"
  exe=$(cargo bench --locked --bench instruction_cost --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [[ -x $exe ]] || { echo "instruction_cost did not build for $impl" >&2; exit 1; }
  # path|what one operation is|operations per iteration
  rows=(
    "exchange|request (8 irecv + 8 isend + wait_all, per request)|16"
    "exchange-into|request, started into the set (*_into), per request|16"
    "put|put_now 8 B (put + flush)|1"
    "get|get_now 8 B (get + flush_local)|1"
    "put-target|put_now 8 B through epoch.target(rank)|1"
    "get-target|get_now 8 B through epoch.target(rank)|1"
    "fetch-and-op|fetch_and_op u64 (fetch_and_op + flush)|1"
    "fetch-and-op-target|fetch_and_op u64 through epoch.target(rank)|1"
    "allreduce|allreduce 8 B (blocking)|1"
    "allreduce-in-place|allreduce_in_place 8 B (blocking)|1"
    "allreduce-init|persistent allreduce 8 B (start + wait)|1"
    "iallreduce|iallreduce 8 B + wait, in a scope|1"
    "bcast|bcast 8 B (blocking)|1"
    "alltoall|alltoall 8 B per pair (blocking)|1"
    "allgatherv|allgatherv 8 B per rank (blocking)|1"
    "sendrecv|sendrecv 8 B (with its status)|1"
    "send-recv|send + recv 8 B, per call (blocking; C ignores the status)|2"
  )
  {
    echo "$impl: instructions in the program's own code per operation (ferrompi path, ffi path, ferrompi's own)"
    for row in "${rows[@]}"; do
      IFS='|' read -r path what ops <<< "$row"
      [[ -z ${ONLY:-} || " $ONLY " == *" $path "* ]] || continue
      per_op=()
      for variant in "$path" "$path-ffi"; do
        counts=()
        for n in "$low" "$high"; do
          file="$out_dir/$impl-$variant-$n.out"
          valgrind --tool=callgrind --callgrind-out-file="$file" "$exe" "$variant" "$n" \
            > "$out_dir/$impl-$variant-$n.log" 2>&1 \
            || { echo "$variant at $n iterations failed on $impl:" >&2; tail -n 20 "$out_dir/$impl-$variant-$n.log" >&2; exit 1; }
          counts+=("$(own_instructions "$file" "$(readlink -f "$exe")")")
        done
        per_op+=("$(awk -v a="${counts[0]}" -v b="${counts[1]}" -v n=$(((high - low) * ops)) \
          'BEGIN { print (b - a) / n }')")
      done
      awk -v what="$what" -v f="${per_op[0]}" -v c="${per_op[1]}" \
        'BEGIN { printf "  %-53s %6.1f %6.1f %+6.1f\n", what ":", f, c, f - c }'
    done
  } | tee "$out_dir/$impl.txt"
done
