#!/usr/bin/env bash
# Runs a command with parts of this machine hidden, in a private mount namespace (root; nothing
# changes outside the command): every libclang shared library under /usr and /opt (bindgen then
# cannot load one), and with `mpi` also every MPI compiler wrapper, mpi.h and pkg-config file of
# MPI there.
#
#   tools/hide.sh libclang -- cargo build          # the kept-bindings fallback
#   tools/hide.sh libclang,mpi -- cargo doc        # with DOCS_RS=1: the docs.rs build
set -euo pipefail
what=$1
[[ ${2:-} == -- ]] || { echo "usage: tools/hide.sh libclang[,mpi] -- COMMAND..." >&2; exit 2; }
shift 2
if [[ -z ${FERROMPI_HIDDEN:-} ]]; then
  [[ $(id -u) -eq 0 ]] || { echo "tools/hide.sh needs root (a private mount namespace)" >&2; exit 1; }
  exec env FERROMPI_HIDDEN="$what" unshare --mount --propagation private -- "$0" "$what" -- "$@"
fi
# Inside the namespace: bind /dev/null over each file. Where system packages put them (what
# clang-sys and the MPI probe search); not the MPIs this project unpacks under target/mpi.
roots=(/usr /opt)
hide=()
if [[ ,$what, == *,libclang,* ]]; then
  mapfile -t found < <(find "${roots[@]}" \( -path /usr/share -o -path /usr/src \) -prune \
    -o -name 'libclang*.so*' \( -type f -o -type l \) -print 2>/dev/null)
  hide+=("${found[@]}")
fi
if [[ ,$what, == *,mpi,* ]]; then
  mapfile -t found < <(find "${roots[@]}" \( -path /usr/share -o -path /usr/src \) -prune \
    -o \( -name 'mpicc*' -o -name 'mpi.h' -o -name 'mpi_abi.h' -o -name 'ompi*.pc' -o -name 'mpich*.pc' \) \
    \( -type f -o -type l \) -print 2>/dev/null)
  hide+=("${found[@]}")
fi
for f in "${hide[@]}"; do
  mount --bind /dev/null "$(readlink -f "$f")" 2>/dev/null || true
done
((${#hide[@]})) || echo "tools/hide.sh: found nothing to hide for '$what'" >&2
exec "$@"
