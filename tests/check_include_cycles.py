#!/usr/bin/env python3
"""No two source files of lib/ depend on each other: when a.cpp includes
b.hpp, b.cpp (or b.hpp) must not include a.hpp. Layers point down only
(docs/architecture.md); a cycle between two files is the smallest break of
that. Usage: check_include_cycles.py SOURCE_ROOT"""
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
    for h in inc.findall(f.read_text(errors="replace")):
        target = str(pathlib.Path(h).with_suffix(""))
        if target != mod and (lib / h).exists():
            deps.setdefault(mod, set()).add(target)
# Pairs that still depend on each other, to be taken apart; a pair leaves
# this list when it is, and no pair joins it (the test fails on a new one).
KNOWN = {
    ("coll/common", "coll/context"),
    ("coll/context", "coll/nonblocking"),
    ("coll/context", "coll/stream"),
    ("coll/context", "coll/task"),
    ("coll/nonblocking", "coll/task"),
}
cycles = sorted({tuple(sorted((a, b))) for a, ds in deps.items() for b in ds if a in deps.get(b, set())})
new = [c for c in cycles if c not in KNOWN]
gone = sorted(KNOWN - set(cycles))
for a, b in cycles:
    print(f"lib/{a} and lib/{b} include each other{'' if (a, b) in KNOWN else ' (new)'}")
for a, b in gone:
    print(f"lib/{a} and lib/{b} no longer include each other: take them off KNOWN")
print(f"{len(deps)} modules, {len(cycles)} include cycles between two files, {len(new)} new")
sys.exit(1 if new or gone else 0)
