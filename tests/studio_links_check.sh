#!/usr/bin/env bash
# The studio loads no LibTorch and no CUDA: every run trains in a tokamak-engine child, so tokamak-studio and the
# studio's suites link only the LibTorch-free libraries (docs/ARCHITECTURE.md, "The whole on one page"). Reads each
# program's NEEDED entries (readelf -d) and fails on any LibTorch, c10 or CUDA library.
# Usage: studio_links_check.sh BUILD_DIR   (CTest: studio_links_check, tests/CMakeLists.txt)
set -euo pipefail
build=${1:?usage: studio_links_check.sh BUILD_DIR}
forbidden='^lib(torch|c10|cuda|cudart|cublas|cublasLt|cudnn|nvrtc|nccl|nvToolsExt|cupti|cusparse|cufft|curand|cusolver|nvJitLink|gomp)([_.-]|$)'
programs=("$build/app/studio/tokamak-studio")
while IFS= read -r suite; do programs+=("$suite"); done < <(find "$build/tests" -maxdepth 1 -type f -name 'test_studio*' -perm -u+x | sort)
status=0
for p in "${programs[@]}"; do
  if [ ! -x "$p" ]; then
    echo "studio_links_check: $p is not built (hint: scripts/build.sh)" >&2
    status=1
    continue
  fi
  needed=$(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  bad=$(grep -E "$forbidden" <<< "$needed" || true)
  if [ -n "$bad" ]; then
    echo "studio_links_check: $(basename "$p") links $(tr '\n' ' ' <<< "$bad")(hint: the studio and its suites link" \
         "tokamak_base and tokamak_fleet, never tokamak_engine; move what they use into engine/base, or ask a tokamak-engine child)" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "studio_links_check: ${#programs[@]} programs, no LibTorch, c10 or CUDA library among their NEEDED entries"
exit $status
