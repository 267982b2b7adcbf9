#!/usr/bin/env python3
"""No source files of lib/ depend on each other in a circle: a module (a.hpp
with a.cpp) that includes b.hpp must not be included back by b, directly or
through other modules. Layers point down only (docs/architecture.md); the
test fails on any cycle and names its modules. Usage:
check_include_cycles.py SOURCE_ROOT"""
import pathlib
import re
import sys

lib = pathlib.Path(sys.argv[1]) / "lib"
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
deps = {}  # module (path without extension, relative to lib) -> modules it includes
for f in lib.rglob("*"):
    if f.suffix not in (".cpp", ".hpp", ".cu"):
        continue
    mod = str(f.relative_to(lib).with_suffix(""))
    deps.setdefault(mod, set())
    for h in inc.findall(f.read_text(errors="replace")):
        target = str(pathlib.Path(h).with_suffix(""))
        if target != mod and (lib / h).exists():
            deps[mod].add(target)

# Strongly connected components (Tarjan, iterative): every component of more
# than one module is a cycle.
index, low, on_stack, stack, cycles = {}, {}, set(), [], []
counter = 0
for start in sorted(deps):
    if start in index:
        continue
    work = [(start, iter(sorted(deps[start])))]
    index[start] = low[start] = counter
    counter += 1
    stack.append(start)
    on_stack.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = counter
                counter += 1
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(deps.get(w, ())))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                x = stack.pop()
                on_stack.discard(x)
                comp.append(x)
                if x == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

for comp in cycles:
    members = set(comp)
    edges = sorted(f"{a} -> {b}" for a in comp for b in deps[a] if b in members)
    print(f"cycle of {len(comp)} modules: {', '.join('lib/' + m for m in comp)} ({'; '.join(edges)})")
print(f"{len(deps)} modules, {len(cycles)} include cycles")
sys.exit(1 if cycles else 0)
