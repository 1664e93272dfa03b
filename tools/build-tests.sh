#!/usr/bin/env bash
# Tests of the build itself (root: they hide parts of the machine with tools/hide.sh):
#  1. every way a build can fail ends with one message saying what was tried and what fixes it:
#     no MPI, a wrapper that cannot run or prints nothing, a wrapper whose mpi.h is missing,
#     directories without mpi.h, libclang missing when bindgen is required, kept bindings that
#     do not match the installed mpi.h, a bad FERROMPI_BINDINGS;
#  2. the docs.rs build: DOCS_RS=1 cargo doc with every MPI and libclang hidden (and, where a
#     nightly toolchain is installed, with docs.rs's --cfg docsrs);
#  3. a second `cargo build` with nothing changed compiles nothing, and a build without the
#     `bindgen` feature compiles no bindgen and uses the kept bindings;
#  4. tools/module-cycles.py finds an import cycle (and src has none);
#  5. the README's dependency section builds a new crate that runs, and a crate can depend on
#     ferrompi and rsmpi's mpi-sys together (distinct `links` values).
# The kept bindings themselves are checked by tools/test.sh: Debian's MPIs run their whole
# suite with libclang hidden, and tools/regen-bindings.sh --check compares every kept set with
# what bindgen makes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
unset FERROMPI_HIDE_LIBCLANG FERROMPI_BINDINGS
[[ $(id -u) -eq 0 ]] || { echo "tools/build-tests.sh needs root (tools/hide.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CARGO_TARGET_DIR="$ROOT/target/build-errors"

# expect_failure NAME NEEDLE... -- COMMAND...: the build must fail and say every NEEDLE.
expect_failure() {
  local name=$1 needles=()
  shift
  while [[ $1 != -- ]]; do needles+=("$1"); shift; done
  shift
  if "$@" > "$tmp/out" 2>&1; then
    echo "build-tests: '$name' built, but it must fail" >&2
    exit 1
  fi
  for needle in "${needles[@]}"; do
    grep -qF -- "$needle" "$tmp/out" || {
      echo "build-tests: '$name' failed without saying '$needle':" >&2
      tail -n 30 "$tmp/out" >&2
      exit 1
    }
  done
  echo "   $name: fails with '${needles[0]}'"
}

echo "== build failures say what was tried and what fixes it"
build=(cargo build --lib --locked)
expect_failure "no MPI installed" "could not find an MPI installation" "apt-get install libopenmpi-dev" \
  -- env -u MPICC tools/hide.sh mpi -- "${build[@]}"
expect_failure "MPICC names no program" "/nonexistent/mpicc -show" "could not run it" "MPICC=/path/to/mpicc" \
  -- env MPICC=/nonexistent/mpicc "${build[@]}"
expect_failure "a wrapper that prints nothing" "printed no flags" "How to fix" \
  -- env MPICC=true "${build[@]}"
printf '#!/bin/sh\necho gcc -I%s/include -L%s/lib -lmpi\n' "$tmp" "$tmp" > "$tmp/mpicc"
chmod +x "$tmp/mpicc"
expect_failure "a wrapper without mpi.h" "cannot include <mpi.h>" "apt-get install libopenmpi-dev or libmpich-dev" \
  -- env MPICC="$tmp/mpicc" "${build[@]}"
expect_failure "directories without mpi.h" "MPI_INCLUDE_DIR: $tmp/mpi.h does not exist" \
  -- env -u MPICC MPI_INCLUDE_DIR="$tmp" MPI_LIB_DIR="$tmp" "${build[@]}"
expect_failure "bindgen required without libclang" "could not load libclang" "apt-get install libclang-dev" \
  -- env MPICC=mpicc.mpich FERROMPI_BINDINGS=bindgen tools/hide.sh libclang -- "${build[@]}"
expect_failure "kept bindings of another MPI" "do not match the mpi.h" "MPI_VERSION == 5" "tools/regen-bindings.sh" \
  -- env MPICC=mpicc.mpich FERROMPI_BINDINGS=mpich-5 "${build[@]}"
expect_failure "kept bindings of another Open MPI" "do not match the mpi.h" "OMPI_MAJOR_VERSION == 5" \
  -- env MPICC=mpicc.openmpi FERROMPI_BINDINGS=openmpi-5 "${build[@]}"
expect_failure "a bad FERROMPI_BINDINGS" "is not one of auto, bindgen, pregenerated" \
  -- env FERROMPI_BINDINGS=clang "${build[@]}"

echo "== docs.rs: DOCS_RS=1 cargo doc with no MPI and no libclang"
export CARGO_TARGET_DIR="$ROOT/target/docsrs"
env -u MPICC DOCS_RS=1 RUSTDOCFLAGS="-D warnings" tools/hide.sh mpi,libclang -- \
  cargo doc --no-deps --all-features --locked --quiet
echo "   stable: ok"
if cargo +nightly --version > /dev/null 2>&1; then
  env -u MPICC DOCS_RS=1 RUSTDOCFLAGS="--cfg docsrs -D warnings" tools/hide.sh mpi,libclang -- \
    cargo +nightly doc --no-deps --all-features --locked --quiet
  grep -q 'crate feature <code>serde</code>' "$CARGO_TARGET_DIR/doc/ferrompi/comm/struct.Communicator.html" \
    || { echo "build-tests: the docs.rs build does not mark what needs the serde feature" >&2; exit 1; }
  echo "   nightly with --cfg docsrs (features marked): ok"
fi

echo "== without the bindgen feature: no bindgen compiled, the kept bindings, no libclang needed"
export CARGO_TARGET_DIR="$ROOT/target/no-bindgen"
env MPICC=mpicc.mpich cargo clippy --lib --no-default-features --locked --quiet -- -D warnings
env MPICC=mpicc.mpich cargo build --lib --no-default-features --locked --quiet
if cargo tree -p ferrompi --no-default-features -e build --prefix none | grep -q '^bindgen'; then
  echo "build-tests: bindgen is still a dependency without the feature" >&2
  exit 1
fi
grep -q "mpich-4 kept" "$CARGO_TARGET_DIR"/debug/build/ferrompi-*/out/ferrompi-bindings-set \
  || { echo "build-tests: the build without bindgen did not use the kept bindings" >&2; exit 1; }
echo "   ok"

echo "== a second build with nothing changed compiles nothing"
mpi_env openmpi
cargo build --all-features --all-targets --locked --quiet
cargo build --all-features --all-targets --locked > "$tmp/out" 2>&1
if grep -E 'Compiling|Running.*build-script' "$tmp/out"; then
  echo "build-tests: the second build was not a no-op" >&2
  exit 1
fi
echo "   ok"

echo "== the import-cycle check fails on a cycle"
mkdir -p "$tmp/cycle/src"
printf 'mod a;\nmod b;\n' > "$tmp/cycle/src/lib.rs"
printf 'pub struct A;\nuse crate::b::B;\n' > "$tmp/cycle/src/a.rs"
printf 'pub struct B;\nuse crate::a::A;\n' > "$tmp/cycle/src/b.rs"
if python3 tools/module-cycles.py "$tmp/cycle/src" > "$tmp/out"; then
  echo "build-tests: tools/module-cycles.py missed a -> b -> a" >&2
  exit 1
fi
grep -q "import cycle: a, b" "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
python3 tools/module-cycles.py src > /dev/null
echo "   ok (and src has none)"

echo "== the README's dependency section works as written (a new crate, built and run)"
mpi_env openmpi
export CARGO_TARGET_DIR="$ROOT/target/build-errors"
user="$tmp/user-crate"
cargo new -q --bin --vcs none "$user"
# The section's toml block, its path pointing at this checkout.
sed -n '/^## Depending on ferrompi/,/^## /p' README.md | sed -n '/^```toml/,/^```/p' \
  | grep -v '^```\|^\[dependencies\]' | sed "s|\"\.\./ferrompi\"|\"$ROOT\"|" >> "$user/Cargo.toml"
grep -q "^ferrompi = { path = \"$ROOT\" }" "$user/Cargo.toml" \
  || { echo "build-tests: the README's toml block has no path dependency line" >&2; cat "$user/Cargo.toml" >&2; exit 1; }
# The crate page's first example, as main.
awk '/^\/\/! ```no_run/ && !n {f=1; n=1; next} f && /^\/\/! ```$/ {f=0} f' src/lib.rs \
  | sed 's|^//! \{0,1\}||' | grep -v '^# Ok::' > "$tmp/body.rs"
{ echo 'fn main() -> Result<(), ferrompi::Error> {'; cat "$tmp/body.rs"; echo '    Ok(())'; echo '}'; } > "$user/src/main.rs"
(cd "$user" && cargo build --offline --quiet)
# shellcheck disable=SC2086 # MPIEXEC holds the launcher and its options
timeout 120 $MPIEXEC -n 2 "$CARGO_TARGET_DIR/debug/user-crate"
echo "   ok: built from the README's instructions and ran at 2 ranks"

echo "== a crate can depend on ferrompi and rsmpi's mpi-sys at once (distinct \`links\`)"
both="$tmp/both-crate"
cargo new -q --lib --vcs none "$both"
# Pinned: mpi-sys 0.2.4 declares `links = "mpi"`; with a range, a conflict would only make the
# resolver fall back to 0.2.1, which declares none.
printf 'ferrompi = { path = "%s" }\nmpi-sys = "=0.2.4"\n' "$ROOT" >> "$both/Cargo.toml"
(cd "$both" && cargo generate-lockfile --quiet) || {
  echo "build-tests: a graph with ferrompi and mpi-sys does not resolve" >&2
  exit 1
}
grep -q '^name = "mpi-sys"' "$both/Cargo.lock" || { echo "build-tests: mpi-sys not in the lock file" >&2; exit 1; }
echo "   ok: one lock file holds both"
