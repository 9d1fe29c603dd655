#!/usr/bin/env bash
# Files of one idea: no .cpp in app/, engine/ or ui/ holds more than 500 lines (a file past that holds several
# ideas: split it by what it holds). Usage: file_size_check.sh SOURCE_DIR (CTest passes it).
set -euo pipefail
root=$1
limit=500
over=$(cd "$root" && find app engine ui -name '*.cpp' -print0 | xargs -0 wc -l | awk -v l=$limit '$2 != "total" && $1 > l')
if [ -n "$over" ]; then
  echo "these files are over $limit lines (hint: split each by the ideas it holds, as engine/torch/train/run_setup.cpp was):" >&2
  echo "$over" >&2
  exit 1
fi
echo "every .cpp in app/, engine/ and ui/ is at most $limit lines ($(cd "$root" && find app engine ui -name '*.cpp' | wc -l) files)"
