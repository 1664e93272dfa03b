#!/usr/bin/env bash
# How the benchmarks launch ranks, shared by tools/setup.sh (so every tool) and by
# tools/bench-run.sh, which runs on a machine with only an MPI (no Rust, no apt): it is sourced,
# defines functions and installs nothing. $MPIEXEC is the implementation's launcher.

# launcher_for RANKS: $MPIEXEC for RANKS processes, with Open MPI's --oversubscribe only when
# RANKS exceeds this machine's cores. Oversubscribed, Open MPI also makes idle ranks yield the
# CPU, which changes what a benchmark measures, so timings use this rather than $MPIEXEC (the test
# suite keeps --oversubscribe: it runs 4 ranks on 2 cores). launch_mode RANKS says which it is.
launcher_for() {
  if (($1 > $(nproc))); then echo "$MPIEXEC"; else echo "${MPIEXEC/ --oversubscribe/}"; fi
}
launch_mode() {
  if (($1 > $(nproc))); then echo "oversubscribed"; else echo "dedicated"; fi
}

# rank_counts: the comparison's rank counts, one per line: $RANKS if set ("2 4 8 16"), else 2
# and 4 everywhere and 8 and 16 where the machine has that many cores (more ranks than cores
# measure the scheduler).
rank_counts() {
  if [[ -n ${RANKS:-} ]]; then
    printf '%s\n' $RANKS
  else
    printf '%s\n' 2 4
    for n in 8 16; do (($(nproc) >= n)) && echo "$n"; done
    true
  fi
}

# run_comparison EXE IMPL RANKS OUT_DIR [ARG...]: runs the comparison benchmark EXE (built for
# IMPL, launched by $MPIEXEC) on RANKS ranks; it writes OUT_DIR/IMPL-nRANKS.{md,csv} and the
# log beside them. ARGs go to the benchmark (--bench, --test). Exits the shell on failure with
# the log's tail.
run_comparison() {
  local exe=$1 impl=$2 ranks=$3 out="$4/$2-n$3" launcher
  shift 4
  launcher=$(launcher_for "$ranks")
  echo "== $impl: comparison under $launcher -n $ranks ($(launch_mode "$ranks")) -> $out.md"
  # shellcheck disable=SC2086 # the launcher and its options
  FERROMPI_BENCH_MODE="$(launch_mode "$ranks")" FERROMPI_BENCH_OUT="$out" \
    timeout 1200 $launcher -n "$ranks" "$exe" "$@" > "$out.log" 2>&1 \
    || { echo "comparison failed on $impl with $ranks ranks:" >&2; tail -n 40 "$out.log" >&2; exit 1; }
}

# pack_mpi PACK IMPL SITE_LIBRARIES: sets $MPIEXEC (exported, with its environment) for one
# implementation of a pack made by tools/bench-pack.sh: the machine's own Open MPI 4 or MPICH
# for `openmpi` and `mpich`, the pack's wheel for the others, whose libraries go in front of
# SITE_LIBRARIES (the machine's own library path).
first() { for c in "$@"; do command -v "$c" && return; done; echo "none of $* found" >&2; return 1; }
pack_mpi() {
  local pack=$1 impl=$2 site=$3
  unset OPAL_PREFIX
  export LD_LIBRARY_PATH=$site
  case $impl in
    openmpi) MPIEXEC="$(first mpirun.openmpi mpirun) --oversubscribe" ;;
    mpich) MPIEXEC=$(first mpiexec.mpich mpiexec.hydra mpiexec) ;;
    openmpi5)
      export OPAL_PREFIX="$pack/mpi-$impl" LD_LIBRARY_PATH="$pack/mpi-$impl/lib${site:+:$site}"
      MPIEXEC="$OPAL_PREFIX/bin/mpirun --oversubscribe"
      ;;
    mpich5 | mpich5-abi)
      export LD_LIBRARY_PATH="$pack/mpi-$impl/lib${site:+:$site}"
      export PATH="$pack/mpi-$impl/bin:$PATH"
      MPIEXEC="$pack/mpi-$impl/bin/mpiexec"
      ;;
    *) echo "unknown implementation '$impl' in $pack/impls" >&2; exit 1 ;;
  esac
  export MPIEXEC
}
