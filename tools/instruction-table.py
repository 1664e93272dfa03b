#!/usr/bin/env python3
"""The table of ferrompi's own instructions per operation, from tools/instruction-cost.sh's
raw outputs kept in docs/bench (tools/docs-regen.sh writes it to docs/bench/instruction-cost.md).

    tools/instruction-table.py DIR

DIR holds `instruction-cost-IMPL.txt` for each MPI measured now, and
`instruction-cost-before-IMPL.txt` for the same rows measured on the code before the request
paths' rework (where kept). One row per operation: what ferrompi adds now on each MPI (before
→ now where a before is kept), what rsmpi adds to the same operation, and the row's ceiling;
then, per row, where the instructions go on Open MPI (BREAKDOWN=1), before and now.
"""
import os
import re
import sys

NAMES = {
    "openmpi": "Open MPI 4.1.4",
    "mpich": "MPICH 4.0.2",
    "openmpi5": "Open MPI 5.0.11",
    "mpich5": "MPICH 5.0.2",
    "mpich5-abi": "MPICH 5.0.2, MPI-5 ABI",
}
ROW = re.compile(r"  (\S.*?):\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)\s+(\S+)\s+<= (\d+)")
PARTS = re.compile(r"      [+-][\d.]+ = (.*)")


def parse(path):
    """{what: {own, rsmpi, ceiling, parts}} of one MPI's output, rows in their order."""
    rows = {}
    last = None
    for line in open(path):
        m = ROW.match(line)
        if m:
            last = m.group(1)
            rows[last] = {"own": float(m.group(4)), "rsmpi": m.group(5), "ceiling": int(m.group(6))}
            continue
        m = PARTS.match(line)
        if m and last:
            rows[last]["parts"] = m.group(1)
    return rows


def num(x):
    return f"{x:+.0f}" if abs(x - round(x)) < 0.05 else f"{x:+.1f}"


def main():
    d = sys.argv[1]
    now, before = {}, {}
    for impl in NAMES:
        path = os.path.join(d, f"instruction-cost-{impl}.txt")
        if os.path.exists(path):
            now[impl] = parse(path)
        path = os.path.join(d, f"instruction-cost-before-{impl}.txt")
        if os.path.exists(path):
            before[impl] = parse(path)
    first = next(iter(now))
    rsmpi = [i for i in now if any(r["rsmpi"] != "-" for r in now[i].values())]
    print("<!-- Made by tools/instruction-table.py from the instruction-cost-*.txt beside it")
    print("     (tools/docs-regen.sh); the .txt are tools/instruction-cost.sh's outputs. -->")
    print("# ferrompi's own instructions per operation\n")
    print("What ferrompi adds to each operation over the same calls through `ffi`, in the")
    print("program's own instructions (callgrind; `tools/instruction-cost.sh`). *before → now*:")
    print("the same benchmark on the code before the request paths' rework. rsmpi: what rsmpi")
    print("0.8.2 adds to the same operation over its own `ffi` twin (`benches/rsmpi`). The")
    print("ceiling is what the test suite allows (on Open MPI 4.1.4).\n")
    head = ["operation"] + [NAMES[i] for i in now] + [f"rsmpi, {NAMES[i]}" for i in rsmpi] + ["ceiling"]
    print("| " + " | ".join(head) + " |")
    print("|---" + "|---:" * (len(head) - 1) + "|")
    for what, row in now[first].items():
        cells = [what]
        for impl in now:
            r = now[impl].get(what)
            b = before.get(impl, {}).get(what)
            cells.append("–" if r is None else (f"{num(b['own'])} → {num(r['own'])}" if b else num(r["own"])))
        for impl in rsmpi:
            r = now[impl].get(what)
            cells.append("–" if r is None or r["rsmpi"] == "-" else num(float(r["rsmpi"])))
        cells.append(str(row["ceiling"]))
        print("| " + " | ".join(cells) + " |")
    print(f"\n## Where the instructions go, on {NAMES[first]}\n")
    print("Each instruction is charged to the source line it came from, and each line to a part")
    print("of the binding (`tools/instruction-breakdown.py`): the thread gate, the scope (its")
    print("count and end), the request (its record, a set's storage), the persistent state,")
    print("the status, argument checks, return codes, moves of `Result`s and `Option`s (and")
    print("`Cell`s) in `core`, and the loop and the MPI calls' arguments beyond the `ffi`")
    print("twin's. Code inlined from `core` keeps `core`'s lines, so the parts are approximate;")
    print("they add up to the row.\n")
    print("| operation | before | now |")
    print("|---|---|---|")
    for what, row in now[first].items():
        b = before.get(first, {}).get(what, {})
        if "parts" in row:
            print(f"| {what} | {b.get('parts', '–')} | {row['parts']} |")


if __name__ == "__main__":
    main()
