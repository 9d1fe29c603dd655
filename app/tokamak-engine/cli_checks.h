// Range checks for command-line numbers, said as `tokamak:` lines with the fix: CLI11's own (PositiveNumber,
// NonNegativeNumber) print "Value 0 not in range 0.000000 to 1797…" with DBL_MAX in 300 digits.
#pragma once
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tokamak::cli {

// above_zero: > 0 ("more than 0"); otherwise >= 0 ("0 or more"). Never more than HIGH.
inline CLI::Validator number_check(bool above_zero, double high = 1e300) {
  return CLI::Validator(
      [above_zero, high](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        // "inf" and "nan" are no answer, and "0x10" (strtod's hexadecimal) is no decimal number a person means.
        const bool number = !text.empty() && end && *end == '\0' && std::isfinite(v) &&
                            text.find_first_of("xX") == std::string::npos;
        const char* want = above_zero ? "more than 0" : "0 or more";
        if (!number) return "'" + text + "' is not a number (hint: give a number " + want + ")";
        if (v > high) return "must be at most " + std::to_string(static_cast<long long>(high)) + ", not " + text;
        if (above_zero ? v > 0 : v >= 0) return "";
        return "must be " + std::string(want) + ", not " + text + " (hint: give a number " + want + ")";
      },
      above_zero ? "> 0" : ">= 0", above_zero ? "positive" : "non-negative");
}

inline CLI::Validator above_zero(double high = 1e300) { return number_check(true, high); }
inline CLI::Validator zero_or_more() { return number_check(false); }

// A whole number from LOW to HIGH, checked before CLI11 converts it (a number too big for an int would otherwise
// get CLI11's own words, which do not say what is wrong).
inline CLI::Validator count_between(long long low, long long high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        const std::string want = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || !end || *end != '\0') return "'" + text + "' is not a whole number (hint: give " + want + ")";
        if (errno == ERANGE || v < low || v > high) return "'" + text + "' is out of range (hint: give " + want + ")";
        return "";
      },
      std::to_string(low) + ".." + std::to_string(high), "count");
}

}  // namespace tokamak::cli
