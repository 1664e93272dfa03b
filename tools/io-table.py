#!/usr/bin/env python3
"""The parallel I/O table from tools/io-bench.sh's raw lines (`# mib N`, then `round binding
ranks mode op seconds`): per operation and process count, the median GiB/s of C and of
ferrompi, the ratio of ferrompi's median time to C's, and collective against independent for
each binding.

    tools/io-table.py RAW IMPL > TABLE.md
"""
import statistics as st
import sys

raw, impl = sys.argv[1], sys.argv[2]
times, modes, mib = {}, {}, None
for line in open(raw):
    if line.startswith("#"):
        key, value = line[1:].split()
        if key == "mib":
            mib = float(value)
        continue
    r, binding, ranks, mode, op, seconds = line.split()
    times.setdefault((binding, int(ranks), op), []).append(float(seconds))
    modes[int(ranks)] = mode
gib = mib / 1024
samples = min(len(v) for v in times.values())
print(f"### {impl}: {mib:.0f} MiB written and read at explicit offsets, GiB/s (medians of {samples} timings from interleaved runs)\n")
print("| processes | operation | C | ferrompi | ferrompi time / C time | collective / independent (C) | collective / independent (ferrompi) |")
print("|---:|---|---:|---:|---:|---:|---:|")
for ranks in sorted(modes):
    for op, independent in (("write_at_all", "write_at"), ("read_at_all", "read_at")):
        c, f = st.median(times[("c", ranks, op)]), st.median(times[("ferrompi", ranks, op)])
        ci, fi = st.median(times[("c", ranks, independent)]), st.median(times[("ferrompi", ranks, independent)])
        print(f"| {ranks} ({modes[ranks]}) | {op} | {gib / c:.2f} | {gib / f:.2f} | {f / c:.3f} | {ci / c:.2f} | {fi / f:.2f} |")
    for op in ("write_at", "read_at"):
        c, f = st.median(times[("c", ranks, op)]), st.median(times[("ferrompi", ranks, op)])
        print(f"| {ranks} ({modes[ranks]}) | {op} | {gib / c:.2f} | {gib / f:.2f} | {f / c:.3f} | | |")
print("\n(collective / independent: the independent call's time over the collective's; above 1, the collective is faster.)")
