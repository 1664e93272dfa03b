#!/usr/bin/env python3
"""Where ferrompi's own instructions go, per operation, from callgrind's per-line counts.

    tools/instruction-breakdown.py OBJECT ROOT OPS LOW HIGH PATH_LOW PATH_HIGH TWIN_LOW TWIN_HIGH
    tools/instruction-breakdown.py --total CALLGRIND_OUT OBJECT

OBJECT is the benchmark program (built with line tables), ROOT the repository, OPS the
operations per iteration, LOW and HIGH the two iteration counts, then the four callgrind
outputs: the ferrompi path and its `ffi` twin at LOW and HIGH iterations. Every instruction
the program's own code executed per iteration is charged to the source line it came from
(inlined code keeps the line of the function it was written in), and each line to a part of
the binding by the file and the function it is in. `tools/instruction-cost.sh` calls this with
BREAKDOWN=1; it prints one line per operation:

    what ferrompi adds = thread gate + scope + request + persistent + status + checks
                         + return codes + moves + (calls and loop beyond the twin's)

where the last part is the program's loop and the MPI calls' arguments, less the whole `ffi`
twin (which is nothing but those), so the parts add up to what `instruction-cost.sh` reports.
"""
import re
import sys
from collections import defaultdict

PARTS = [
    "thread gate",
    "scope",
    "request",
    "persistent",
    "status",
    "checks",
    "return codes",
    "moves",
]
CALLS = "calls and loop"


def per_line(path, wanted):
    """Self cost per (file, line) of the object `wanted` in a callgrind output: every cost line
    of a function whose object is `wanted` (a line after `calls=` is the callee's inclusive
    cost, and is skipped)."""
    names_ob, names_fl = {}, {}
    cost = defaultdict(int)
    ob = cur = None
    last = 0
    skip = False

    def name(table, token):
        m = re.match(r"\((\d+)\)(?: (.*))?", token)
        if not m:
            return token
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1))

    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            ob = name(names_ob, line[3:])
        elif line.startswith("cob="):
            name(names_ob, line[4:])
        elif line.startswith("fl=") or line.startswith(("fi=", "fe=")):
            cur = name(names_fl, line[3:])
        elif line.startswith(("cfi=", "cfl=")):
            name(names_fl, line[4:])
        elif line.startswith("calls="):
            skip = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            p = parts[0]
            last = last if p == "*" else last + int(p) if p[0] in "+-" else int(p)
            if skip:
                skip = False
                continue
            if ob == wanted and len(parts) > 1:
                cost[(cur or "?", last)] += int(parts[1])
    return cost


_sources = {}


def enclosing(root, file, line):
    """The `impl` and `fn` a line of the repository's `src/` is in: ('Drop for Count', 'drop')."""
    if not file.startswith(root + "/src/"):
        return ("", "")
    if file not in _sources:
        try:
            _sources[file] = open(file).read().split("\n")
        except OSError:
            _sources[file] = []
    lines = _sources[file]
    fn = imp = ""
    for text in reversed(lines[: max(line, 0)]):
        if not fn:
            m = re.match(r"\s*(?:pub(?:\([^)]*\))? )?(?:const )?(?:unsafe )?fn (\w+)", text)
            if m:
                fn = m.group(1)
        # The first item that starts a line: an `impl` the line is in, or anything else
        # (a free function, the end of an earlier item), when it is in none.
        if text[:1].isalpha() or text[:1] == "}":
            m = re.match(r"(?:unsafe )?impl(?:<.*?>)? (.*?)\s*\{?$", text)
            imp = m.group(1) if m else ""
            break
    return (imp, fn)


def part(root, file, line):
    """The part of the binding a source line belongs to (see the module docs)."""
    rel = file[len(root) + 1 :] if file.startswith(root + "/") else file
    imp, fn = enclosing(root, file, line)
    if (rel == "src/gate.rs" and fn == "is_checked") or rel == "src/comm/agreement.rs":
        return "checks"  # checked collectives: one load and a test
    if rel == "src/gate.rs" or rel.endswith(("thread/local.rs", "sync/atomic.rs")):
        return "thread gate"
    if rel == "src/env.rs" and fn.startswith(("enter", "gated")):
        return "thread gate"
    if rel == "src/request/mod.rs":
        if fn == "scope" or "InFlight" in imp or "Count" in imp or "AtEnd" in imp:
            return "scope"
        if fn in ("wait_with", "test_with") and "status" in source_line(file, line).lower():
            return "status"
        return "request"
    if rel.startswith("src/request/persistent/"):
        return "persistent"
    if rel.startswith("src/request/"):
        return "request"
    if rel == "src/status.rs":
        return "status"
    if rel == "src/error.rs":
        return "return codes"
    if rel in ("src/datatype.rs", "src/comm/p2p.rs", "src/comm/agreement.rs", "src/comm/mod.rs"):
        return "checks"
    if rel.startswith("src/comm/large/"):
        return "checks"
    if rel.startswith("src/"):
        return CALLS  # the MPI calls' arguments, as the twin passes them
    if re.search(r"alloc/src/(vec|raw_vec)/", rel):
        return "request"  # a set's handles and indices, in vectors
    if re.search(r"/(result|option|cell|mem/mod|ptr/mod|ops/try_trait|convert/mod)\.rs$", rel):
        return "moves"  # `core`'s Result, Option and Cell, inlined: moves, tests, counters
    return CALLS


def source_line(file, line):
    lines = _sources.get(file) or []
    return lines[line - 1] if 0 < line <= len(lines) else ""


def main():
    if sys.argv[1] == "--total":
        # What tools/instruction-cost.sh counts: every instruction of OBJECT's own code.
        print(sum(per_line(sys.argv[2], sys.argv[3]).values()))
        return
    obj, root, ops, low, high = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    path_lo, path_hi, twin_lo, twin_hi = sys.argv[6:10]
    n = (high - low) * ops
    a, b = per_line(path_lo, obj), per_line(path_hi, obj)
    totals = defaultdict(float)
    for key in set(a) | set(b):
        totals[part(root, *key)] += (b.get(key, 0) - a.get(key, 0)) / n
    ta, tb = per_line(twin_lo, obj), per_line(twin_hi, obj)
    twin = sum(tb.values()) / n - sum(ta.values()) / n
    own = sum(totals.values()) - twin
    shown = [f"{p} {totals[p]:+.1f}" for p in PARTS if abs(totals[p]) >= 0.05]
    shown.append(f"{CALLS} beyond the twin's {totals[CALLS] - twin:+.1f}")
    print(f"{own:+.1f} = " + ", ".join(shown))


if __name__ == "__main__":
    main()
