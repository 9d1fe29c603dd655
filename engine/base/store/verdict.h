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
  int n_a = 0, n_b = 0;             // the values the test used
  int total_a = 0, total_b = 0;     // the runs in each group
  int censored_a = 0, censored_b = 0;  // runs that never reached the target (+inf): counted, never dropped
  double mean_a = 0, mean_b = 0;
  double diff = 0;             // mean_b − mean_a
  double low = 0, high = 0;    // its 95% confidence interval
  double p = 1;                // two-sided
  double df = 0;               // Welch–Satterthwaite
  bool tested = false;         // Welch's test ran: two values a side or more, and some spread
  bool resolved = false;       // tested, the interval excludes 0, and every run of both groups has its value
  int seeds_needed = 0;        // runs per group to resolve a difference this size (80% power, 5% level), at
                               // least 2; 0 when the means are the same (nothing to resolve)
};

// A value per run of each group: NaN for a run without it (failed, diverged), +inf for a run that never reached a
// target (censored). The test uses the finite values; a verdict with any run missing or censored is never
// "resolved": the runs that survived are not the group. None only when neither group has any run with a value.
std::optional<Verdict> welch_verdict(const std::vector<double>& a, const std::vector<double>& b);
int missing_a(const Verdict& v);  // runs of group a with no value (neither used nor censored)
int missing_b(const Verdict& v);

// "+12.3K (95% CI +8.10K to +16.5K), p = 0.004, runs 3 of 3 and 3 of 3: resolved" / "…: not resolved (7 seeds a
// group would resolve it)" / "…, runs 3 of 3 and 2 of 5: not resolved (3 runs have no value: the survivors alone
// would bias it)"; FORMAT writes a value with its sign ("%+.3g" by default).
std::string verdict_text(const Verdict& v, const std::function<std::string(double)>& format = {});

}  // namespace tokamak
