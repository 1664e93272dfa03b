#!/usr/bin/env bash
# Builds an example and runs it under mpirun: installs what is missing first.
#
#   tools/run-example.sh                 # the flagship SDDP solver, 4 ranks, Open MPI, plot in
#                                        # target/sddp-bounds.svg
#   tools/run-example.sh hello 2 mpich   # example, ranks, implementation
#   tools/run-example.sh sddp 2 mpich --stages 24 --json   # the flagship with its options
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

example="${1:-sddp}"
ranks="${2:-4}"
mpi_env "${3:-openmpi}"
shift $(($# < 3 ? $# : 3))
if [[ $example == sddp ]]; then
  # The flagship is a package of its own (examples/sddp), with its LP solver and plotting crate.
  flagship_env
  cargo build --quiet --locked --release -p ferrompi-sddp
  (($#)) || set -- --plot target/sddp-bounds.svg
  # shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
  exec $MPIEXEC -n "$ranks" "$CARGO_TARGET_DIR/release/sddp" "$@"
fi
cargo build --quiet --locked --release --example "$example"
# shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
exec $MPIEXEC -n "$ranks" "$CARGO_TARGET_DIR/release/examples/$example" "$@"
