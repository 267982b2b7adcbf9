#!/usr/bin/env python3
"""The README stays a page (at most 200 lines, starting with the two
commands), and every relative link in it and in docs/guide/ names a file
that exists. Usage: check_docs.py SOURCE_ROOT"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
bad = []
readme = (root / "README.md").read_text().splitlines()
if len(readme) > 200:
    bad.append(f"README.md has {len(readme)} lines (at most 200: the reference belongs in docs/guide/)")
head = "\n".join(readme[:6])
for cmd in ("mpi_launch_scripts/demo.sh", "mpi_launch_scripts/test.sh"):
    if cmd not in head:
        bad.append(f"README.md does not start with {cmd}")
pages = [root / "README.md"] + sorted((root / "docs" / "guide").glob("*.md"))
link = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
for page in pages:
    for n, line in enumerate(page.read_text().splitlines(), 1):
        for target, _ in link.findall(line):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                bad.append(f"{page.relative_to(root)}:{n}: link to {target}, which does not exist")
for b in bad:
    print(b)
print(f"{len(pages)} pages checked, {len(bad)} problems")
sys.exit(1 if bad else 0)
