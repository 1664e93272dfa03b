#!/usr/bin/env bash
# Packs the comparison with C for a machine that has cores but no Rust (a cluster's compute
# node, a 16-core machine): the benchmark built here for each implementation, and the
# PyPI-wheel MPIs it needs (relocatable), into one folder. There tools/bench-run.sh (in the
# pack) runs it with nothing but bash; the report is made back here:
#
#   tools/bench-pack.sh DIR [IMPL...]   # here; IMPLs as mpi_env's (default: openmpi mpich5)
#   DIR/tools/bench-run.sh OUT          # there; RANKS="2 4 8 16" as tools/bench.sh's
#   DIR/tools/bench-side-by-side.sh OUT # there, with cores to spare: the implementations at
#                                       # once, each rank on a core of its own
#   FERROMPI_BENCH_DIR=OUT cargo run --release -p ferrompi-bench-report   # here
#
# GPU=1 also packs, for a machine with an NVIDIA GPU, each implementation's multi-rank harness
# and examples/topk_sparse_allreduce built with the feature `cuda` (stripped), and
# tools/gpu-run.sh, which runs them on the GPU's memory:
#
#   GPU=1 tools/bench-pack.sh DIR openmpi5 mpich5   # here
#   DIR/tools/gpu-run.sh OUT                        # there
#
# `openmpi` and `mpich` (Debian's) run against that machine's own Open MPI 4.x or MPICH
# (libmpi.so.40 and libmpich.so.12 keep their ABI across minor versions); `openmpi5`, `mpich5`
# and `mpich5-abi` carry their wheel (about 18 and 20 MiB).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"

dir=${1:?usage: tools/bench-pack.sh DIR [IMPL...]}
shift
impls=("$@")
((${#impls[@]})) || impls=(openmpi mpich5)
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/tools"
cp tools/bench-run.sh tools/bench-side-by-side.sh tools/launch.sh tools/gpu-run.sh "$dir/tools/"
for impl in "${impls[@]}"; do
  mpi_env "$impl"
  exe=$(cargo bench --locked --bench comparison --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [[ -x $exe ]] || { echo "building the comparison for $impl failed" >&2; exit 1; }
  cp "$exe" "$dir/bin/comparison-$impl"
  if [[ -n ${GPU:-} ]]; then
    built() { sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1; }
    exe=$(cargo test --locked --all-features --test mpi --no-run --message-format=json 2>/dev/null | built)
    strip -o "$dir/bin/harness-$impl" "$exe"
    cargo build --locked --release --features cuda --example topk_sparse_allreduce --quiet
    strip -o "$dir/bin/topk-$impl" "$CARGO_TARGET_DIR/release/examples/topk_sparse_allreduce"
  fi
  # A wheel's launcher and run-time libraries; headers, compiler wrappers and the other ABI's
  # library stay behind.
  prefix=$(dirname "$(dirname "$(command -v "${MPICC%% *}")")")
  case $impl in
    openmpi5)
      mkdir -p "$dir/mpi-$impl"
      cp -r "$prefix/bin" "$prefix/lib" "$prefix/share" "$prefix/etc" "$dir/mpi-$impl/"
      ;;
    mpich5 | mpich5-abi)
      mkdir -p "$dir/mpi-$impl/bin" "$dir/mpi-$impl/lib"
      cp "$prefix"/bin/{mpiexec,mpiexec.hydra,hydra_pmi_proxy} "$dir/mpi-$impl/bin/"
      cp -r "$prefix/lib/mpich" "$dir/mpi-$impl/lib/"
      lib=libmpi.so.12
      [[ $impl == mpich5 ]] || lib=libmpi_abi.so.1
      cp "$prefix/lib/$lib" "$dir/mpi-$impl/lib/"
      ;;
  esac
done
echo "${impls[*]}" > "$dir/impls"
echo "packed ${impls[*]} into $dir ($(du -sh "$dir" | cut -f1)); run $dir/tools/bench-run.sh OUT there"
