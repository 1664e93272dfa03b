#!/usr/bin/env bash
# The full test suite: installs what is missing, then for Open MPI and MPICH in turn builds the
# crate, runs clippy, the unit and doc tests, the multi-rank harness (1, 2, 3 and 4 ranks, plus
# singleton runs), every example under the launcher, each benchmark once under the launcher, and
# rustdoc; rustfmt first. On MPICH it also runs the user-op and request programs under valgrind
# (memcheck, 2 ranks): MPICH is clean under memcheck, Open MPI's PMIx is not. Fails on the first
# failure.
#
#   tools/test.sh            # both implementations
#   tools/test.sh mpich      # one of them
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich)

echo "== rustfmt"
cargo fmt --all -- --check

for impl in "${impls[@]}"; do
  mpi_env "$impl"
  echo "== $impl: clippy ($MPICC)"
  cargo clippy --all-targets --all-features --locked -- -D warnings
  cargo clippy --lib --locked -- -D warnings # and without optional features
  echo "== $impl: tests"
  cargo test --all-features --locked
  if [[ $impl == mpich ]]; then
    echo "== $impl: user ops and requests under valgrind (memcheck, 2 ranks)"
    FERROMPI_RANKS=2 FERROMPI_TEST_TIMEOUT=600 \
      FERROMPI_WRAPPER="valgrind -q --error-exitcode=99" \
      cargo test --all-features --locked --test mpi -- soundness reductions nonblocking persistent leak
  fi
  echo "== $impl: examples under the launcher (their assertions must hold)"
  for run in "hello 4" "ping_pong 2" "channel 4" "async_exchange 4" "topk_sparse_allreduce 4" \
    "persistent_sync 4"; do
    set -- $run
    # shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
    timeout 300 $MPIEXEC -n "$2" "$CARGO_TARGET_DIR/debug/examples/$1" > "$CARGO_TARGET_DIR/example-$1.log" 2>&1 \
      || { echo "example $1 failed on $impl:"; cat "$CARGO_TARGET_DIR/example-$1.log"; exit 1; }
    echo "   $1 -n $2: ok ($(tail -n 1 "$CARGO_TARGET_DIR/example-$1.log"))"
  done
  echo "== $impl: benchmarks, each run once under the launcher (criterion --test)"
  QUICK=1 bash tools/bench.sh "$impl" > /dev/null
  echo "== $impl: docs"
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --locked --quiet
done
echo "== all tests passed on: ${impls[*]}"
