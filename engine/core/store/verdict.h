// Whether two groups of runs differ, with its uncertainty: the difference of their means with a 95% confidence
// interval and a two-sided p-value from Welch's t-test (unequal variances; Welch–Satterthwaite degrees of
// freedom), "not resolved" when the interval spans zero, and the seeds a group would need to resolve a
// difference of the observed size (80% power at the 5% level, normal approximation with the two groups' mean
// variance). The t and normal distributions are Boost.Math's. LibTorch-free.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tokamak {

struct Verdict {
  int n_a = 0, n_b = 0;
  double mean_a = 0, mean_b = 0;
  double diff = 0;             // mean_b − mean_a
  double low = 0, high = 0;    // its 95% confidence interval
  double p = 1;                // two-sided
  double df = 0;               // Welch–Satterthwaite
  bool resolved = false;       // the interval excludes 0
  int seeds_needed = 0;        // runs per group to resolve a difference this size (80% power, 5% level), at
                               // least 2; 0 when the means are the same (nothing to resolve)
};

// NaN values are left out. None when a group has fewer than two values, or neither varies (nothing to test).
std::optional<Verdict> welch_verdict(const std::vector<double>& a, const std::vector<double>& b);

// "+12.3K (95% CI +8.10K to +16.5K), p = 0.004: resolved" / "… p = 0.31: not resolved (7 seeds a group would
// resolve it)"; FORMAT writes a value with its sign ("%+.3g" by default).
std::string verdict_text(const Verdict& v, const std::function<std::string(double)>& format = {});

}  // namespace tokamak
