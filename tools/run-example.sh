#!/usr/bin/env bash
# Builds an example and runs it under mpirun: installs what is missing first.
#
#   tools/run-example.sh                 # hello, 4 ranks, Open MPI
#   tools/run-example.sh hello 2 mpich   # example, ranks, implementation
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

example="${1:-hello}"
ranks="${2:-4}"
mpi_env "${3:-openmpi}"
cargo build --quiet --locked --release --example "$example"
# shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
exec $MPIEXEC -n "$ranks" "$CARGO_TARGET_DIR/release/examples/$example"
