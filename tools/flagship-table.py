#!/usr/bin/env python3
"""The flagship's tables from tools/flagship-bench.sh's raw lines: JSON summaries labelled
`run` (before, now, default, scale) and `mode`, and `# `-prefixed lines holding the solver's
--lp-times table. Prints Markdown: today's solver against the one before it, the LP solve
times by cuts, and wall time and MPI share by rank count.

    tools/flagship-table.py RAW > TABLE.md
"""
import json
import statistics as st
import sys

runs, lp_rows = [], []
for line in open(sys.argv[1]):
    if line.startswith("# "):
        cells = line[2:].split()
        if len(cells) == 7 and all(c.replace(".", "", 1).isdigit() for c in cells):
            lp_rows.append(cells)
        continue
    if line.strip():
        runs.append(json.loads(line))

impl = runs[0]["impl"]
by = lambda label: [r for r in runs if r["run"] == label]
before, now = by("before"), by("now")
if before and now:
    b, n = st.median(r["seconds"] for r in before), st.median(r["seconds"] for r in now)
    lb_b, lb_n = before[0]["lower_bound"], now[0]["lower_bound"]
    print(f"### {impl}: the default instance, {now[0]['iterations']} iterations, 1 rank "
          f"(medians of {min(len(before), len(now))} interleaved runs)\n")
    print("| solver | seconds | of which LP solves | lower bound | cut digest |")
    print("|---|---:|---:|---:|---|")
    for name, rows, med in (("before: every LP rebuilt, interior point (Clarabel)", before, b),
                            ("now: LPs kept, dual simplex from a basis (HiGHS)", now, n)):
        solve = st.median(r["solve_seconds"] for r in rows)
        digests = sorted({r["cut_digest"] for r in rows})
        print(f"| {name} | {med:.3f} | {solve:.3f} | {rows[0]['lower_bound']:.9f} | {', '.join(digests)} |")
    print(f"\nNow {b / n:.1f}× faster; lower bounds differ by {abs(lb_n - lb_b) / abs(lb_b):.1e} "
          "relative: the cuts differ (degenerate stage LPs have many optimal duals; the simplex "
          "returns a vertex, an interior-point solver a point inside the optimal face), and both "
          "sequences of cuts bound the same optimum from below.\n")
if lp_rows:
    print(f"### {impl}: time per LP solve by the cuts in the LP (1 rank, 50 iterations)\n")
    print("| cuts | warm solves | µs per warm solve | simplex iterations | cold solves | µs per cold solve | simplex iterations |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for cells in lp_rows:
        print("| " + " | ".join(cells) + " |")
    print("\nWarm: from the same pass's forward basis at that stage, or from the previous scenario's solve; cold: from the slack basis.\n")
for label, title in (("default", "the default instance"),
                     ("scale", "--scenarios 1000 --stages 24 --reservoirs 3, 20 iterations")):
    rows = by(label)
    if not rows:
        continue
    print(f"### {impl}: {title}, by rank count\n")
    print("| ranks | launch | iterations | stopped by | seconds | LP solves | MPI | MPI share | MPI: forward / backward / bounds | cut digest |")
    print("|---:|---|---:|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        share = r["comm_seconds"] / max(r["comm_seconds"] + r["solve_seconds"], 1e-300)
        split = " / ".join(f"{r.get('comm_' + k + '_seconds', float('nan')):.3f}" for k in ("forward", "backward", "bounds"))
        print(f"| {r['ranks']} | {r['mode']} | {r['iterations']} | {r['stopped_by']} | {r['seconds']:.2f} | "
              f"{r['solve_seconds']:.2f} | {r['comm_seconds']:.3f} | {100 * share:.1f} % | {split} | {r['cut_digest']} |")
    print("\nLP solves and MPI: the slowest rank's seconds; MPI includes waiting for the other ranks.")
    print()
