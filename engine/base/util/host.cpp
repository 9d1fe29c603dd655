// This machine's name and the wall clock (see host.h).
#include "engine/base/util/host.h"

#include <unistd.h>

#include <chrono>

namespace tokamak {

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count() / 1e6;
}

std::string this_host() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace tokamak
