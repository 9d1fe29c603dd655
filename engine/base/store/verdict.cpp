// Welch's t-test between two groups of runs (see verdict.h).
#include "engine/base/store/verdict.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tokamak {
namespace {

struct Moments {
  int n = 0, total = 0, censored = 0;
  double mean = 0, var = 0;  // sample variance (n − 1)
};

Moments moments(const std::vector<double>& values) {
  Moments m;
  m.total = static_cast<int>(values.size());
  double sum = 0;
  for (double v : values) {
    if (std::isinf(v) && v > 0) ++m.censored;
    if (!std::isfinite(v)) continue;
    sum += v;
    ++m.n;
  }
  if (m.n == 0) return m;
  m.mean = sum / m.n;
  double ss = 0;
  for (double v : values)
    if (std::isfinite(v)) ss += (v - m.mean) * (v - m.mean);
  m.var = m.n > 1 ? ss / (m.n - 1) : 0;
  return m;
}

std::string signed_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3g", v);
  return buf;
}

}  // namespace

std::optional<Verdict> welch_verdict(const std::vector<double>& a, const std::vector<double>& b) {
  const Moments x = moments(a), y = moments(b);
  if (x.n + x.censored == 0 && y.n + y.censored == 0) return std::nullopt;
  Verdict v;
  v.n_a = x.n;
  v.n_b = y.n;
  v.total_a = x.total;
  v.total_b = y.total;
  v.censored_a = x.censored;
  v.censored_b = y.censored;
  v.mean_a = x.mean;
  v.mean_b = y.mean;
  v.diff = y.mean - x.mean;
  const double va = x.n > 0 ? x.var / x.n : 0, vb = y.n > 0 ? y.var / y.n : 0, se2 = va + vb;
  if (x.n < 2 || y.n < 2 || !(se2 > 0)) return v;
  v.tested = true;
  v.df = se2 * se2 / (va * va / (x.n - 1) + vb * vb / (y.n - 1));
  const double se = std::sqrt(se2), t = v.diff / se;
  const boost::math::students_t dist(v.df);
  v.p = 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
  const double q = boost::math::quantile(boost::math::complement(dist, 0.025));
  v.low = v.diff - q * se;
  v.high = v.diff + q * se;
  const bool whole = x.n == x.total && y.n == y.total;
  v.resolved = whole && (v.low > 0 || v.high < 0);
  // n = 2 (z₀.₉₇₅ + z₀.₈)² s² / d² per group, s² the groups' mean variance: the textbook sample size for a
  // two-sample comparison, in the normal approximation (it says how many, not when the t-test's df would agree).
  const boost::math::normal z;
  const double zz = boost::math::quantile(z, 0.975) + boost::math::quantile(z, 0.8);
  const double s2 = (x.var + y.var) / 2;
  if (v.diff == 0) {
    v.seeds_needed = 0;  // the same means: no number of seeds resolves a difference of nothing
  } else {
    const double n = std::ceil(2 * zz * zz * s2 / (v.diff * v.diff));
    v.seeds_needed = n > 1e9 ? 1000000000 : std::max(2, static_cast<int>(n));
  }
  return v;
}

int missing_a(const Verdict& v) { return v.total_a - v.n_a - v.censored_a; }
int missing_b(const Verdict& v) { return v.total_b - v.n_b - v.censored_b; }

std::string verdict_text(const Verdict& v, const std::function<std::string(double)>& format) {
  const std::function<std::string(double)> f = format ? format : signed_text;
  const std::string runs = "runs " + std::to_string(v.n_a) + " of " + std::to_string(v.total_a) + " and " +
                           std::to_string(v.n_b) + " of " + std::to_string(v.total_b);
  const int missing = missing_a(v) + missing_b(v), censored = v.censored_a + v.censored_b;
  std::string s;
  if (v.tested) {
    char p[32];
    std::snprintf(p, sizeof p, v.p < 0.001 ? "p < 0.001" : "p = %.2g", v.p);
    s = f(v.diff) + " (95% CI " + f(v.low) + " to " + f(v.high) + "), " + p + ", " + runs;
  } else {
    s = "no test, " + runs;
  }
  // What the runs that are not counted say comes first: a group that lost members is not the group it was.
  std::string lost;
  if (censored > 0)
    lost = std::to_string(censored) + (censored == 1 ? " run never reached" : " runs never reached") +
           " the target (censored, not dropped)";
  if (missing > 0)
    lost += (lost.empty() ? "" : "; ") + std::to_string(missing) + (missing == 1 ? " run has" : " runs have") +
            " no value (failed or diverged)";
  if (!lost.empty()) return s + ": not resolved (" + lost + ": the runs that survived alone would bias it)";
  if (!v.tested)
    return s + (v.n_a < 2 || v.n_b < 2 ? ": not resolved (a group needs 2 runs with a value or more)"
                                        : ": not resolved (neither group varies)");
  if (v.resolved) return s + ": resolved";
  if (v.seeds_needed == 0) return s + ": not resolved (the means are the same)";
  if (v.seeds_needed > 10000) return s + ": not resolved (a difference this small would need over 10,000 seeds a group)";
  return s + ": not resolved (" + std::to_string(v.seeds_needed) + " seeds a group would resolve it)";
}

}  // namespace tokamak
