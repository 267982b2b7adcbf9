#!/bin/sh
# docs/env.md must be what the configuration table renders (duct-info -c --markdown).
# Regenerate with: build/apps/duct-info -c --markdown > docs/env.md
"$1" -c --markdown | diff -u "$2" - && echo "docs/env.md matches the configuration table"
