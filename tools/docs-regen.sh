#!/usr/bin/env bash
# Regenerates what the performance page shows from the raw results kept in docs/bench: each
# run's report and plots (benches/report), each pair's table of rows over target
# (tools/bench-two-runs.py, below the marker line in the pair's README.md), and the table of
# instructions per operation (tools/instruction-table.py: docs/bench/instruction-cost.md from
# the instruction-cost-*.txt that tools/instruction-cost.sh wrote), the parallel I/O tables
# (tools/io-table.py) and the flagship's (tools/flagship-table.py).
#
#   tools/docs-regen.sh           # rewrite them
#   tools/docs-regen.sh --check   # and fail if that changed a tracked file
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
marker='<!-- Below: tools/bench-two-runs.py run1 run2 (tools/docs-regen.sh). -->'
for pair in docs/bench/2-cores docs/bench/16-cores; do
  FERROMPI_PLOT_PNG=0 FERROMPI_BENCH_DIR="$pair/run1" cargo run -q --release --locked -p ferrompi-bench-report > /dev/null
  grep -qxF "$marker" "$pair/README.md" || { echo "docs-regen: $pair/README.md has no marker line" >&2; exit 1; }
  {
    sed "/^$(printf '%s' "$marker" | sed 's/[][\/.*^$]/\\&/g')\$/q" "$pair/README.md"
    echo
    python3 tools/bench-two-runs.py "$pair/run1" "$pair/run2"
  } > "$pair/README.md.new"
  mv "$pair/README.md.new" "$pair/README.md"
done
python3 tools/instruction-table.py docs/bench > docs/bench/instruction-cost.md
# The parallel I/O tables, from tools/io-bench.sh's raw lines.
{
  echo "# Parallel I/O against C"
  echo
  echo "Made by \`tools/docs-regen.sh\` from the raw lines beside it (\`tools/io-bench.sh\`, then"
  echo "\`tools/io-table.py\`); see the performance page."
  for raw in docs/bench/file-io/file-io-*.raw; do
    impl=$(basename "$raw" .raw)
    echo
    python3 tools/io-table.py "$raw" "${impl#file-io-}"
  done
} > docs/bench/file-io/README.md
# The flagship's tables, from tools/flagship-bench.sh's raw lines.
{
  echo "# The flagship's speed"
  echo
  echo "Made by \`tools/docs-regen.sh\` from the raw lines beside it (\`tools/flagship-bench.sh\`, then"
  echo "\`tools/flagship-table.py\`); see the flagship's README."
  for raw in docs/bench/flagship/flagship-*.raw; do
    echo
    python3 tools/flagship-table.py "$raw"
  done
} > docs/bench/flagship/README.md
if [[ ${1:-} == --check ]]; then
  if ! git diff --quiet -- docs/bench || [[ -n $(git ls-files --others --exclude-standard docs/bench) ]]; then
    echo "docs-regen: regenerating from the raw results changed these files:" >&2
    git status --short -- docs/bench >&2
    exit 1
  fi
  echo "   docs/bench regenerates unchanged from its raw results"
fi
