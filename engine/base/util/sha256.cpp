// sha256_of_file (see sha256.h).
#include "engine/base/util/sha256.h"

#include "engine/base/util/error.h"
#include "engine/base/util/process.h"

namespace tokamak {

std::string sha256_of_file(const std::string& path) {
  const ProcessResult r = run_process({"sha256sum", "--", path}, {}, 0);
  if (r.code != 0 || r.out.size() < 64)
    throw Error(
        "cannot compute the sha256 of " + path + (r.err.empty() ? "" : ": " + r.err.substr(0, r.err.find('\n'))),
        "is coreutils' sha256sum installed?");
  return r.out.substr(r.out[0] == '\\' ? 1 : 0, 64);
}

}  // namespace tokamak
