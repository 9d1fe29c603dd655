// Sizes and counts for a reader (see format.h).
#include "engine/base/util/format.h"

#include <cmath>
#include <cstdio>

namespace tokamak {
namespace {

// `value` in the largest unit of `units` (each 1000 times the one before) that keeps it at 1 or more, to three
// significant digits; below the first step, a whole number. The unit is chosen after rounding, so 999.7 kB
// reads "1 MB", never "1e+03 kB".
std::string three_digits(double value, const char* const units[], int count, const char* space) {
  if (std::isnan(value)) return "-";
  const char* sign = value < 0 ? "-" : "";
  double v = std::abs(value);
  char buf[48];
  if (v < 999.5 || count == 1) {
    std::snprintf(buf, sizeof buf, "%s%.0f%s%s", sign, v, *units[0] ? space : "", units[0]);
    return buf;
  }
  int unit = 0;
  while (unit + 1 < count && v >= 999.5) v /= 1000, ++unit;
  // %.3g drops trailing zeros ("1.5", "10") and keeps three digits otherwise ("1.23", "12.3", "123"); past the
  // last unit, whole numbers rather than an exponent.
  std::snprintf(buf, sizeof buf, v >= 999.5 ? "%s%.0f%s%s" : "%s%.3g%s%s", sign, v, space, units[unit]);
  return buf;
}

}  // namespace

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return three_digits(bytes, units, 6, " ");
}

std::string format_count(double count) {
  static const char* const units[] = {"", "K", "M", "B", "T"};
  return three_digits(count, units, 5, "");
}

std::string format_duration(double s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%d s", static_cast<int>(s));
  return buf;
}

}  // namespace tokamak
