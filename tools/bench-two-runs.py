#!/usr/bin/env python3
"""Compares two full comparison runs (two target/bench folders, or copies of them): per MPI
and rank count, how many rows are over target in each run and in both, then every row over
target in either run, as Markdown (tools/docs-regen.sh puts it in docs/bench/*/README.md).

    tools/bench-two-runs.py RUN1 RUN2

A row is over target when its ratio (ferrompi / C) exceeds its target; window creation
(SharedWindow::allocate, which allocates by design) is counted in the rows but never as over.
Each cell gives the ratio, and over target the paired difference per operation.

Last, on the rows that carry the Rust `ffi` control (a second C-speed implementation that adds
nothing, see docs/performance.md, "Method"): how many rows are over target for
ferrompi and for that control, in each run, against the same C side and target. The control's
count is the floor this machine's noise sets for a binding that costs nothing.
"""
import collections
import csv
import glob
import os
import sys

NEVER_OVER = {"shared_alloc"}


def users_name(implementation):
    """The family as users write it, without the version (older tables say OpenMpi, Mpich)."""
    family = implementation.rsplit(" ", 1)[0] if any(c.isdigit() for c in implementation) else implementation
    return {"OpenMpi": "Open MPI", "Mpich": "MPICH", "StandardAbi": "MPI-5 ABI"}.get(family, family)


def load(folder):
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, "*-n*.csv"))):
        for row in csv.DictReader(open(path)):
            key = (users_name(row["implementation"]), int(row["ranks"]), row["operation"], int(row["bytes"]))
            rows[key] = row
    if not rows:
        sys.exit(f"no *-n*.csv rows in {folder}")
    return rows


def over(row, column="ratio"):
    return row is not None and row["group"] not in NEVER_OVER and float(row[column]) > float(row["target"])


def has_control(row):
    return row is not None and row.get("ffi_ratio", "") != ""


def cell(row):
    if row is None:
        return "–"
    text = f"{float(row['ratio']):.3f}"
    return f"**{text}**, {float(row['difference_ns']):+.0f} ns" if over(row) else text


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    first, second = load(sys.argv[1]), load(sys.argv[2])
    keys = sorted(set(first) | set(second))
    counts = collections.OrderedDict()
    for key in keys:
        count = counts.setdefault(key[:2], [0, 0, 0, 0])
        a, b = over(first.get(key)), over(second.get(key))
        count[0] += 1
        count[1] += a
        count[2] += b
        count[3] += a and b
    print("| MPI | ranks | rows | over in run 1 | over in run 2 | over in both |")
    print("|---|---:|---:|---:|---:|---:|")
    for (mpi, ranks), (rows, a, b, both) in counts.items():
        print(f"| {mpi} | {ranks} | {rows} | {a} | {b} | {both} |")
    print()
    print("| MPI | ranks | operation | bytes | run 1 | run 2 | target |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for key in keys:
        a, b = first.get(key), second.get(key)
        if over(a) or over(b):
            print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {cell(a)} | {cell(b)} | {(a or b)['target']} |")
    print()
    floor = collections.OrderedDict()
    for key in keys:
        for run, rows in enumerate((first, second)):
            row = rows.get(key)
            if not has_control(row):
                continue
            count = floor.setdefault(key[:2], [[0, 0, 0], [0, 0, 0]])[run]
            count[0] += 1
            count[1] += over(row)
            count[2] += over(row, "ffi_ratio")
    print("| MPI | ranks | rows with the ffi control | over: ferrompi, run 1 / 2 | over: Rust ffi, run 1 / 2 |")
    print("|---|---:|---:|---:|---:|")
    for (mpi, ranks), (a, b) in floor.items():
        print(f"| {mpi} | {ranks} | {a[0]} | {a[1]} / {b[1]} | {a[2]} / {b[2]} |")


main()
