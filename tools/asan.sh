#!/usr/bin/env bash
# The multi-rank harness built with AddressSanitizer: every program's ranks run with ASan's
# checks on the crate's code and on the memcpy/memmove/memset calls MPI's libraries make into
# the C library (ASan intercepts those, though the libraries are not instrumented; copies
# their compiler inlined, and kernel copies such as CMA, it cannot see), so an MPI call that
# copies past a Rust buffer, or into freed memory, ends the run with ASan's report.
#
# The build is the machine's stable toolchain with RUSTC_BOOTSTRAP=1, which admits
# `-Zsanitizer=address` (the ASan runtime ships with the standard library for
# x86_64-unknown-linux-gnu); `--target` keeps build scripts and proc macros uninstrumented. One
# target directory per MPI, target/asan-IMPL. The `asan_canary` program, which runs only in
# such a build, tells MPI an 8-byte buffer holds 64 and must end with ASan's report: the
# script fails if it did not run, so a build without ASan cannot pass.
#
# What ASan needs from the MPIs: UCX (MPICH's network layer, and Open MPI's where it loads it)
# patches mmap at start-up, which crashes under ASan's interceptors, so its memory hooks are
# off; so is Open MPI's own memory patcher. Leak detection is off: MPI keeps memory until the
# process ends, and some programs leak on purpose (mem::forget tests).
#
# Left out: large_count (2-8 GiB buffers, plus ASan's shadow and quarantine, on a 24 GiB
# machine). The harness's usual environment applies (FERROMPI_RANKS, FERROMPI_SKIP, ...).
#
#   tools/asan.sh                           # Debian's MPICH and Open MPI, 1-4 ranks
#   FERROMPI_RANKS=2 tools/asan.sh openmpi  # what tools/test.sh runs
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(mpich openmpi)
host=$(rustc -vV | sed -n 's/^host: //p')

for impl in "${impls[@]}"; do
  mpi_env "$impl"
  export CARGO_TARGET_DIR="$ROOT/target/asan-$impl"
  log="$CARGO_TARGET_DIR/asan-harness.log"
  mkdir -p "$CARGO_TARGET_DIR"
  echo "   $impl: building the harness with AddressSanitizer ($host)"
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
    cargo test --all-features --locked --target "$host" --test mpi --no-run --quiet
  exe=$(RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
    cargo test --all-features --locked --target "$host" --test mpi --no-run \
    --message-format=json 2> /dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [[ -x $exe ]] || { echo "the ASan harness did not build for $impl" >&2; exit 1; }
  echo "   $impl: the harness under AddressSanitizer (${FERROMPI_RANKS:-1-4} ranks; all but large_count)"
  ASAN_OPTIONS=detect_leaks=0 \
    UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_MEM_EVENTS=no \
    OMPI_MCA_memory=^patcher \
    FERROMPI_SKIP="large_count${FERROMPI_SKIP:+,$FERROMPI_SKIP}" \
    FERROMPI_TEST_TIMEOUT="${FERROMPI_TEST_TIMEOUT:-300}" \
    "$exe" > "$log" 2>&1 || { cat "$log"; echo "AddressSanitizer run failed on $impl" >&2; exit 1; }
  grep -q '^PASS .* asan_canary: aborted as expected' "$log" \
    || { cat "$log"; echo "asan_canary did not run: is this an ASan build?" >&2; exit 1; }
  echo "   $impl: $(tail -n 1 "$log"); the canary: $(grep -m1 'asan_canary' "$log" | sed 's/^PASS *//')"
done
