#!/usr/bin/env bash
# Runs every doctest of the crate under the launcher at N ranks (default 3), not only as the
# singleton `cargo test --doc` runs them: the examples are written to hold at any rank count.
# Needs a nightly toolchain (rustdoc's --persist-doctests keeps the merged doctest binary); each
# test is then started by number (RUSTDOC_DOCTEST_RUN_NB_TEST, how rustdoc itself runs one).
#
#   tools/doctests-at-ranks.sh [openmpi|mpich] [ranks]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
impl=${1:-openmpi}
ranks=${2:-3}
cargo +nightly --version > /dev/null 2>&1 || { echo "doctests-at-ranks: needs a nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
mpi_env "$impl"
export CARGO_TARGET_DIR="$CARGO_TARGET_DIR-nightly-doctests"
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
RUSTDOCFLAGS="-Z unstable-options --persist-doctests $keep" \
  cargo +nightly test --doc --all-features --locked --quiet > "$keep/cargo.log" 2>&1 \
  || { tail -n 30 "$keep/cargo.log" >&2; exit 1; }
runner="$keep/merged_doctest_2024_0"
[[ -x $runner/rust_out ]] || { echo "doctests-at-ranks: no merged doctest binary in $keep" >&2; exit 1; }
mapfile -t names < <(grep -A1 'new_doctest($' "$runner/doctest_runner_2024.rs" | grep '^"' | sed 's/^"\([^"]*\)".*/\1/')
((${#names[@]})) || { echo "doctests-at-ranks: found no doctests" >&2; exit 1; }
failed=0
for n in "${!names[@]}"; do
  # shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
  if ! RUSTDOC_DOCTEST_RUN_NB_TEST=$n timeout 60 $MPIEXEC -n "$ranks" "$runner/rust_out" \
    > "$keep/out" 2>&1 < /dev/null; then
    echo "FAIL at $ranks ranks: ${names[$n]}"
    tail -n 5 "$keep/out"
    failed=$((failed + 1))
  fi
done
echo "doctests at $ranks ranks on $impl: $((${#names[@]} - failed)) of ${#names[@]} passed"
((failed == 0))
