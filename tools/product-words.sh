#!/usr/bin/env bash
# Fails if a product file speaks of how it was made rather than of the product: numbered work
# periods, tracker numbers, the particular machine a measurement happened to run on, the work
# item at hand (the patterns below). History belongs in CHANGELOG.md and commit messages.
# Checked: the README, docs/ (but the raw results under docs/bench/*/run*/), and the sources,
# tests, examples, benchmarks and tools.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pattern='\b[Ss]essions? ?[0-9]|\b[Ss]ession(-by-|'"'"'s |'"'"' )|\bthis session\b|(^|[ (])#[0-9]{1,3}\b|\b(this|the) VM\b|\blent (machine|device|GPU|pair|run|[0-9])|\bmachine lent\b|\bthis task($|[^'"'"'])|\bthis issue\b|\bissue #?[0-9]|\bstop [0-9]{2}\b|\bstops? [0-9]{2}\b'
mapfile -t files < <(git ls-files -- README.md docs src tests examples benches tools build.rs Cargo.toml .ci \
  | grep -E '\.(md|rs|sh|py|c|h|toml)$|^\.ci/|^tools/netns-rsh$' \
  | grep -Ev '^docs/bench/[^/]+/run[0-9]+/|^tools/product-words\.sh$')
if hits=$(grep -nE "$pattern" "${files[@]}"); then
  echo "product files speak of how they were made (history goes in CHANGELOG.md):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "   no process talk in ${#files[@]} product files"
