#!/usr/bin/env bash
# Installs what ferrompi needs on Debian/Ubuntu when it is missing: Open MPI and MPICH (headers,
# libraries, launchers), libclang for bindgen, a C compiler, pkg-config, and valgrind (the suite
# runs the user-op and request programs under memcheck). Idempotent and quick
# when everything is there. Sourced by the other tools; also runnable on its own.
set -euo pipefail

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich libclang-dev clang gcc pkg-config valgrind)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ferrompi setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  [[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "ferrompi setup: no Rust toolchain found. Install Rust 1.86 or newer with rustup (https://rustup.rs)." >&2
  exit 1
fi
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    rustup component add "$component" >/dev/null 2>&1 || echo "ferrompi setup: could not add $component" >&2
  fi
done

# Launching as root needs Open MPI's explicit consent.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# mpicc and launcher of one implementation: `mpi_env openmpi` or `mpi_env mpich`.
mpi_env() {
  case "$1" in
    openmpi) export MPICC=mpicc.openmpi MPIEXEC="mpirun.openmpi --oversubscribe" ;;
    mpich) export MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich ;;
    *) echo "unknown MPI implementation '$1' (openmpi or mpich)" >&2; return 1 ;;
  esac
  export CARGO_TARGET_DIR="$ROOT/target/$1"
}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
