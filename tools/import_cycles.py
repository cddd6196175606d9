#!/usr/bin/env python3
"""Find import cycles between the top-level modules of the workspace's crates.

    python3 tools/import_cycles.py CRATE_DIR...   # e.g. frontend symbolic . (the binary)

A module refers to another when its text, outside its `#[cfg(test)]` part (and outside
files of modules declared behind `#[cfg(test)]`), names
`crate::OTHER` (a `use`, a path, or a doc link: each says the module is written on top of
OTHER). Submodules count as their top-level module. Prints, per crate, the strongly
connected components of more than one module (`frontend []` when there are none) and exits
1 when any crate given has one, so CI can run it (.ci/run). Run from the repository root.
Standard library only.
"""
import os
import re
import sys
from collections import defaultdict


def modules(crate):
    """Module path (`ir::print`, `` for the crate root) -> file, for every `.rs` under src/."""
    src = os.path.join(crate, "src")
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            parts = os.path.relpath(path, src)[:-3].split("/")
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            found["::".join(parts)] = path
    return found


def top(module):
    return module.split("::")[0] if module else ""


def references(crate):
    """Top-level module -> the other top-level modules it refers to."""
    mods = modules(crate)
    names = set(top(m) for m in mods if m)
    graph = defaultdict(set)
    # Files of modules declared behind `#[cfg(test)]` (`#[cfg(test)] mod example_check;`)
    # are tests too.
    test_only = set()
    for module, path in mods.items():
        with open(path) as f:
            for child in re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\(crate\))?\s+)?mod\s+(\w+)\s*;", f.read()):
                test_only.add(f"{module}::{child}" if module else child)
    for module, path in mods.items():
        if module in test_only:
            continue
        with open(path) as f:
            text = f.read()
        # What follows `#[cfg(test)]` is the module's tests, which may use anything.
        cut = text.find("#[cfg(test)]")
        if cut >= 0:
            text = text[:cut]
        for other in re.findall(r"crate::(\w+)", text):
            if other in names and other != top(module):
                graph[top(module)].add(other)
    return names, graph


def cycles(names, graph):
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(names):
        if v not in index:
            visit(v)
    return found


def main(crates):
    if not crates:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    any_cycle = False
    for crate in crates:
        names, graph = references(crate)
        found = cycles(names, graph)
        print(crate, found)
        any_cycle = any_cycle or bool(found)
    return 1 if any_cycle else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
