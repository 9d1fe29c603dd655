// Range checks for command-line numbers, said as `tokamak:` lines with the fix: CLI11's own (PositiveNumber,
// NonNegativeNumber) print "Value 0 not in range 0.000000 to 1797…" with DBL_MAX in 300 digits.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

namespace tokamak::cli {

// above_zero: > 0 ("more than 0"); otherwise >= 0 ("0 or more").
inline CLI::Validator number_check(bool above_zero) {
  return CLI::Validator(
      [above_zero](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end && *end == '\0';
        const char* want = above_zero ? "more than 0" : "0 or more";
        if (!number) return "'" + text + "' is not a number (hint: give a number " + want + ")";
        if (above_zero ? v > 0 : v >= 0) return "";
        return "must be " + std::string(want) + ", not " + text + " (hint: give a number " + want + ")";
      },
      above_zero ? "> 0" : ">= 0", above_zero ? "positive" : "non-negative");
}

inline CLI::Validator above_zero() { return number_check(true); }
inline CLI::Validator zero_or_more() { return number_check(false); }

}  // namespace tokamak::cli
