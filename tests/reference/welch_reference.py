#!/usr/bin/env python3
"""Reference statistics from SciPy for tests/test_verdict.cpp: Welch's t-test between two groups.

  welch_reference.py IN.json OUT.json
IN.json: a list of {"a": [...], "b": [...]}. OUT.json: for each, the difference mean(b) - mean(a), its 95% confidence
interval, the two-sided p-value and the Welch-Satterthwaite degrees of freedom (scipy.stats.ttest_ind with
equal_var=False, b against a), and the seeds a group needs to resolve that difference at 80% power and the 5% level:
ceil(2 (z_0.975 + z_0.8)^2 s^2 / d^2), s^2 the two sample variances' mean (scipy.stats.norm's quantiles).
"""
import json
import math
import sys

import numpy as np
from scipy import stats


def main():
    cases = json.load(open(sys.argv[1]))
    out = []
    for c in cases:
        a, b = np.array(c["a"], dtype=float), np.array(c["b"], dtype=float)
        r = stats.ttest_ind(b, a, equal_var=False)
        ci = r.confidence_interval(confidence_level=0.95)
        d = b.mean() - a.mean()
        s2 = (a.var(ddof=1) + b.var(ddof=1)) / 2
        z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
        out.append({"diff": d, "low": ci.low, "high": ci.high, "p": r.pvalue, "df": r.df,
                    "seeds": max(2, math.ceil(2 * z * z * s2 / (d * d)))})
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
