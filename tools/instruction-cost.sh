#!/usr/bin/env bash
# The binding's own instructions per operation, counted by callgrind: a measure that is the
# same on every run, unlike the timings on this VM. For each path of benches/instruction_cost.rs
# (a ferrompi path and its ffi twin) it runs the program as a singleton under
# `valgrind --tool=callgrind` at two iteration counts and sums the instructions executed in the
# program's own code (ferrompi is inlined into it; MPI's libraries are not counted). The
# per-iteration difference between the two counts, ferrompi path minus ffi path, divided by the
# operations per iteration, is what ferrompi adds to each operation. About a minute per MPI.
#
#   tools/instruction-cost.sh                 # Debian's Open MPI and MPICH
#   tools/instruction-cost.sh mpich           # one of them
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
  declare -A per_iteration=()
  for path in exchange exchange-ffi put put-ffi get get-ffi; do
    counts=()
    for n in "$low" "$high"; do
      file="$out_dir/$impl-$path-$n.out"
      valgrind --tool=callgrind --callgrind-out-file="$file" "$exe" "$path" "$n" \
        > "$out_dir/$impl-$path-$n.log" 2>&1 \
        || { echo "$path at $n iterations failed on $impl:" >&2; tail -n 20 "$out_dir/$impl-$path-$n.log" >&2; exit 1; }
      counts+=("$(own_instructions "$file" "$(readlink -f "$exe")")")
    done
    per_iteration[$path]=$(awk -v a="${counts[0]}" -v b="${counts[1]}" -v n=$((high - low)) \
      'BEGIN { print (b - a) / n }')
  done
  python3 - "$impl" "${per_iteration[exchange]}" "${per_iteration[exchange-ffi]}" \
    "${per_iteration[put]}" "${per_iteration[put-ffi]}" \
    "${per_iteration[get]}" "${per_iteration[get-ffi]}" <<'EOF' | tee "$out_dir/$impl.txt"
import sys
impl, *v = sys.argv[1:]
ex, exf, put, putf, get, getf = map(float, v)
print(f"{impl}: instructions in the program's own code per operation (ferrompi path, ffi path, "
      f"ferrompi's own)")
print(f"  request (8 irecv + 8 isend + wait_all, per request): {ex/16:6.1f} {exf/16:6.1f} {(ex-exf)/16:+6.1f}")
print(f"  put_now 8 B (put + flush):                          {put:6.1f} {putf:6.1f} {put-putf:+6.1f}")
print(f"  get_now 8 B (get + flush_local):                    {get:6.1f} {getf:6.1f} {get-getf:+6.1f}")
EOF
done
