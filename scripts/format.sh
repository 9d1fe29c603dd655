#!/usr/bin/env bash
# Formats the project's C++ (engine, app, ui, tests, experiments) with .clang-format; `--check` lists the
# files that would change and exits 1 if any would.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'engine/*' 'app/*' 'ui/*' 'tests/*' 'experiments/*' | grep -E '\.(cpp|h|cu|cuh)$')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "needs formatting: $f"; bad=1; fi
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
