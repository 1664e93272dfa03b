#!/usr/bin/env python3
"""Fails when the crate's modules import each other in a circle.

Reads every src/**/*.rs, takes each path a module names in code (`crate::…`, `super::…`,
`self::…`, a child module's name in a `use`, and names re-exported at the crate root resolved
to where they are defined), comments and `#[cfg(test)] mod tests` left out, and reports every
strongly connected group of modules with more than one member. A parent declaring a child
(`mod x;`) or re-exporting it (`pub use x::Item;`, a facade) is not an import; a child
importing its parent is, and so is a parent using a child's item itself. `-v` prints every
edge.

    tools/module-cycles.py [src] [-v]
"""
import os
import re
import sys

root = next((a for a in sys.argv[1:] if not a.startswith("-")), "src")
modules = {}
for directory, _, files in os.walk(root):
    for name in files:
        if name.endswith(".rs"):
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, root)[:-3].split("/")
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            modules["::".join(parts)] = path

# Names re-exported at the crate root: crate::Status -> status.
lib = open(os.path.join(root, "lib.rs")).read()
reexported = {}
for m in re.finditer(r"pub use ([\w:]+)::\{([^}]*)\};", lib):
    for item in m.group(2).split(","):
        if item.strip():
            reexported[item.strip()] = m.group(1)
for m in re.finditer(r"pub use ([\w:]+)::(\w+);", lib):
    reexported[m.group(2)] = m.group(1)


def resolve(current, segments):
    """The module a path names: its longest prefix that is a module."""
    if segments[0] == "crate":
        if len(segments) > 1 and segments[1] in reexported:
            segments = ["crate"] + reexported[segments[1]].split("::") + segments[2:]
        base, segments = [], segments[1:]
    elif segments[0] == "super":
        base = current[:]
        while segments and segments[0] == "super":
            base, segments = base[:-1], segments[1:]
    elif segments[0] == "self":
        base, segments = current[:], segments[1:]
    else:  # a child module named directly in a `use`
        base = current[:]
    for i in range(len(segments), -1, -1):
        candidate = "::".join(base + segments[:i])
        if candidate in modules:
            return candidate
    return None


def child_names(module):
    prefix = module + "::" if module else ""
    return {c[len(prefix):] for c in modules if c.startswith(prefix) and c != module and "::" not in c[len(prefix):]}


edges = {m: set() for m in modules}
for module, path in modules.items():
    current = module.split("::") if module else []
    source = open(path).read()
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", source, flags=re.S)
    # A module re-exporting its own children is their facade, not an import of them.
    source = re.sub(r"^\s*pub(?:\([^)]*\))? use (?:self::)?(\w+)::[^;]*;", lambda m: "" if m.group(1) in child_names(module) else m.group(0), source, flags=re.M)
    paths = [m.group(1).split("::") for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", source)]
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)*)::\{([^}]*)\}", source):
        for item in m.group(2).split(","):
            item = item.strip().split("::")[0].split(" ")[0]
            if item:
                paths.append(m.group(1).split("::") + [item])
    for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))? )?use (\w+)::", source, flags=re.M):
        if m.group(1) in child_names(module):
            paths.append([m.group(1)])
    for segments in paths:
        target = resolve(current, segments)
        if target is not None and target not in (module, ""):
            edges[module].add(target)

index, low, stack, on_stack, groups = {}, {}, [], set(), []
sys.setrecursionlimit(10000)


def connect(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in edges[v]:
        if w not in index:
            connect(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        group = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            group.append(w)
            if w == v:
                break
        groups.append(group)


for v in edges:
    if v not in index:
        connect(v)
if "-v" in sys.argv:
    for m in sorted(edges):
        print(m or "(crate root)", "->", ", ".join(sorted(edges[m])))
cycles = [sorted(g) for g in groups if len(g) > 1]
for group in cycles:
    print("import cycle:", ", ".join(group))
    for m in group:
        print("   ", m, "->", ", ".join(sorted(e for e in edges[m] if e in group)))
print(f"{len(modules)} modules, {sum(map(len, edges.values()))} imports, {len(cycles)} cycles")
sys.exit(1 if cycles else 0)
