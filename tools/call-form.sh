#!/usr/bin/env bash
# What the form of a call into libmpi costs, C against C: benches/c/call_form_loop.c built twice
# with the MPI's compiler wrapper, as C is built by default (each call through a PLT stub) and
# with -fno-plt (each call through the GOT, as rustc calls a shared library), linked into one
# program (benches/c/call_form.c) that runs both in interleaved rounds under the launcher with 2
# ranks. The comparison's C reference is built with -fno-plt (build.rs), so that its ratios
# compare the binding with C calling MPI the same way; this table is the difference that choice
# leaves out. Tables go to target/bench/call-form-<impl>.md (or $FERROMPI_BENCH_DIR, which
# tools/bench.sh sets). About 10 seconds per MPI.
#
#   tools/call-form.sh                 # Debian's Open MPI and MPICH, 41 rounds
#   ROUNDS=81 tools/call-form.sh mpich # any of tools/setup.sh's implementations
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)
rounds=${ROUNDS:-41}
out_dir="${FERROMPI_BENCH_DIR:-$ROOT/target/bench}"
mkdir -p "$out_dir"
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  build="$CARGO_TARGET_DIR/call-form"
  mkdir -p "$build"
  $MPICC -O2 -DCALL_FORM=call_form_plt -c -o "$build/plt.o" benches/c/call_form_loop.c
  $MPICC -O2 -fno-plt -DCALL_FORM=call_form_got -c -o "$build/got.o" benches/c/call_form_loop.c
  $MPICC -O2 -o "$build/call-form" benches/c/call_form.c "$build/plt.o" "$build/got.o"
  # The two builds must differ in the call's form, or the table would compare a loop with itself
  # (checked on x86-64, by the relocations: a PLT32 call, a GOTPCREL(X) load of the address).
  if [[ $(uname -m) == x86_64 ]]; then
    objdump -r "$build/plt.o" | grep -q 'R_X86_64_PLT32 *MPI_Put' \
      && objdump -r "$build/got.o" | grep -q 'R_X86_64_GOTPCRELX\? *MPI_Put' \
      || { echo "call-form: the two builds of the loop do not differ in the call's form" >&2; exit 1; }
  fi
  launcher=$(launcher_for 2)
  echo "== $impl: call forms, $rounds rounds under $launcher -n 2 ($(launch_mode 2)) -> $out_dir/call-form-$impl.md"
  # With Open MPI's single-copy mechanism off, as ferrompi's processes run (src/env.rs): with it
  # on, the 8-byte puts and gets took 19-42 ns here (another path in Open MPI), not 14.
  # shellcheck disable=SC2086 # the launcher and its options
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_smsc='^cma,knem,xpmem' \
    timeout 300 $launcher -n 2 "$build/call-form" "$rounds" < /dev/null > "$out_dir/call-form-$impl.md" \
    || { echo "call-form failed on $impl" >&2; exit 1; }
  cat "$out_dir/call-form-$impl.md"
done
