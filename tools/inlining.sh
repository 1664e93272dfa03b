#!/usr/bin/env bash
# Whether a program that calls ferrompi's operations from more than one place gets them inlined:
# builds benches/inlining.rs (two copies of a function that calls every blocking, nonblocking,
# persistent and RMA operation once) in release mode, disassembles it, and fails if a copy
# calls into ferrompi for anything but the paths that are out of line by design (large counts,
# slow paths, errors, set-up; the list is `allowed` below). Calls are read both ways a program
# makes them: direct (`call <addr>`, generic code instantiated in the program) and through the
# GOT (`call *slot(%rip)`, ferrompi's non-generic functions), each slot resolved through its
# relocation to the function's symbol. About half a minute per MPI.
#
#   tools/inlining.sh              # Debian's Open MPI and MPICH
#   tools/inlining.sh mpich        # one of them
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
out_dir="$ROOT/target/inlining"
mkdir -p "$out_dir"

for impl in "${impls[@]}"; do
  mpi_env "$impl"
  exe=$(cargo bench --locked --bench inlining --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [[ -x $exe ]] || { echo "the inlining probe did not build for $impl" >&2; exit 1; }
  objdump -d --no-show-raw-insn -C "$exe" > "$out_dir/$impl.asm"
  readelf -rW "$exe" > "$out_dir/$impl.relocs"
  nm -C "$exe" > "$out_dir/$impl.symbols"
  python3 - "$impl" "$out_dir/$impl.asm" "$out_dir/$impl.relocs" "$out_dir/$impl.symbols" <<'EOF'
import collections, re, sys
impl, asm, relocs, symbols = sys.argv[1:]

# Out of line by design: large counts, slow paths (the thread gate's and its release of a lock
# or a watchdog's mark, the argument checks', a request set's growth and its completion after
# the first test), errors and clean-up,
# and setting up (persistent requests, windows, epochs, partitions).
allowed = re.compile(
    # large counts, slow paths, errors
    r"(_big|_large|_slow|_slow_on|::failed|::settle_active|::settle_failed|::finish_pending|::enter_slow"
    r"|::release_serial|gate::release|Error::from_code|Repair::apply|RequestSet::grow|complete_pending"
    r"|still_pending|repair_completed|Partition<T>::block|::uneven|::misfit|::overlapping"
    r"|::leaked_in_flight|::already_active|target::incomplete|::not_attached|::agree_now"
    r"|::agree_checked|::finish_owned|::still_held|::repair_at_end"
    # making an error: boxing its kind, and the cold functions that describe one
    r"|Error as core::convert::From<.*>>::from|::invalid_rank|::count_overflow|::not_locked"
    r"|::bad_rank|::not_per_neighbor"
    # a scope's end when it kept something or has repairs to make
    r"|request::end"
    # set-up, and the clean-up of what the copies make (an error, a scope and its set, a
    # persistent request, a window, a partition; not a request, whose drop is inline)
    r"|_init|Partition<T>::uniform|::lock_all|rma::Window<T>>::epoch|WindowEpoch<T>>::target"
    r"|::cart_create"
    r"|RequestStorage::with_capacity"
    r"|drop_in_place<alloc::boxed::Box<ferrompi::error::Counted>>"
    r"|drop_in_place<ferrompi::(error::Error|request::Scope|request::set::Request(Set|Storage)"
    r"|request::persistent::PersistentRequest|window::rma::Window|comm::partition::Partition"
    r"|comm::cart::CartCommunicator)"
    r"(<.*>)?>)$"
)

# A GOT slot that the loader fills with an address in the program: R_X86_64_RELATIVE.
slot_target = {}
for line in open(relocs):
    parts = line.split()
    if len(parts) == 4 and parts[2] == "R_X86_64_RELATIVE":
        slot_target[int(parts[0], 16)] = int(parts[3], 16)
name_at = {}
for line in open(symbols):
    symbol = re.match(r"^([0-9a-f]+) [tTwW] (.*)$", line.rstrip("\n"))
    if symbol:
        name_at[int(symbol.group(1), 16)] = symbol.group(2)

calls, mpi_calls, function = collections.defaultdict(collections.Counter), collections.Counter(), None
for line in open(asm):
    head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if head:
        copy = re.match(r"inlining::(first|second)_", head.group(1))
        function = head.group(1) if copy else None
        continue
    if function is None or "call" not in line:
        continue
    direct = re.search(r"call +[0-9a-f]+ <(.*)>$", line)
    through_got = re.search(r"call +\*0x[0-9a-f]+\(%rip\) +# ([0-9a-f]+) <(.*)>$", line)
    if direct:
        target = direct.group(1)
    elif through_got:
        slot, label = int(through_got.group(1), 16), through_got.group(2)
        if slot not in slot_target:  # a shared library's symbol, named by objdump
            if label.startswith(("MPI_", "PMPI_")):
                mpi_calls[function] += 1
            continue
        target = name_at.get(slot_target[slot], hex(slot_target[slot]))
    else:
        continue
    if "ferrompi" in target:
        calls[function][target] += 1

copies = [f for f in ("inlining::first_copy", "inlining::second_copy") if mpi_calls[f] >= 20]
if len(copies) != 2:
    sys.exit(f"{impl}: the probe's two copies are not both there, each calling MPI "
             f"({dict(mpi_calls)}): nothing was checked")
bad = [(f, t, n) for f, targets in calls.items() for t, n in targets.items() if not allowed.search(t)]
for f, t, n in sorted(bad):
    print(f"{impl}: {f} calls {t} out of line ({n}x)")
if bad:
    sys.exit(f"{impl}: {len(bad)} operation(s) not inlined where a program calls them from two places")
total = sum(sum(t.values()) for t in calls.values())
checked = sum(mpi_calls.values())
print(f"{impl}: every operation inlined at both sites ({checked} calls into MPI; the {total} "
      f"calls into ferrompi are all large-count, slow, error or set-up paths)")
EOF
done
