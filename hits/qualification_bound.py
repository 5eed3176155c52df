"""How sure a qualification sheet is: the upper credible bound of balanced accuracy. Pure (scipy).

Balanced accuracy is the mean of the share right among present facts and among absent ones.
Each class's accuracy is given the posterior of a uniform prior, Beta(1 + right, 1 + wrong),
and the two are independent; the bound is the `level` quantile of their mean, computed exactly
(up to rounding): the CDF of the sum X + Y is the integral of pdf_X(t) * CDF_Y(s - t) over t (a
convolution), whose integrand is a polynomial in t of degree (facts of X) + (facts of Y) + 1 for
these integer parameters, so Gauss-Legendre quadrature with enough nodes integrates it exactly;
its quantile is found by root finding (to 1e-10). A class without facts is left out, as the
score leaves it out (the bound is then that one class's Beta quantile); no facts at all bound
nothing (1.0).

The decision (`verdict`) fails a worker only on evidence: pass when the point estimate reaches
the pass score, fail when even the upper bound is below it, else not decided yet (another sheet
is needed). One decision looks at the worker's growing evidence up to `looks` times (a sheet,
then that sheet with the next, ...), and each look is a chance to fail them by bad luck, so each
uses the bound at the level corrected for all of them (`corrected_level`, Bonferroni: 95% on one
look, 98.75% on each of four). At the last look allowed a worker still not decided passes:
benefit of the doubt, never a failure on a point score; the work's gold watch (`below_on_gold`,
scoring.runs.workers, and an adaptive batch's opt-in stop at chance) keeps watching them with a
bound."""

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy import optimize, special, stats

LEVEL = 0.95


def balanced_accuracy(present_right: int, present: int, absent_right: int, absent: int) -> float:
    """The point estimate: the mean of the shares right per class (classes without facts left out)."""
    shares = [right / n for right, n in ((present_right, present), (absent_right, absent)) if n]
    return sum(shares) / len(shares) if shares else 0.0


def upper_bound(present_right: int, present: int, absent_right: int, absent: int, level: float = LEVEL) -> float:
    """The one-sided upper credible bound at `level` of the balanced accuracy."""
    classes = [(1 + right, 1 + n - right) for right, n in ((present_right, present), (absent_right, absent)) if n]
    if not classes:
        return 1.0
    if len(classes) == 1:
        return float(stats.beta.ppf(level, *classes[0]))
    (a1, b1), (a2, b2) = classes
    nodes, weights = leggauss((present + absent) // 2 + 2)  # exact to degree present + absent + 2 (the integrand: + 1)

    def cdf_of_sum(s: float) -> float:
        lo, hi = max(0.0, s - 1.0), min(1.0, s)
        half = (hi - lo) / 2
        t = half * nodes + (hi + lo) / 2
        integrand = stats.beta.pdf(t, a1, b1) * special.betainc(a2, b2, np.clip(s - t, 0.0, 1.0))
        inside = half * np.sum(weights * integrand)
        return float(inside + special.betainc(a1, b1, lo))  # below lo (s > 1), CDF_Y(s - t) is 1

    total = optimize.brentq(lambda s: cdf_of_sum(s) - level, 0.0, 2.0, xtol=1e-10)
    return float(total / 2)


def corrected_level(looks: int) -> float:
    """The level of the bound on each of `looks` looks at one growing body of evidence
    (Bonferroni): 1 - 0.05 / looks, so the looks together fail a worker at the mark about 5% of
    the time at most, not 5% per look."""
    return 1 - (1 - LEVEL) / looks


def verdict(
    present_right: int, present: int, absent_right: int, absent: int, pass_score: float, *, look: int, looks: int
) -> bool | None:
    """True (passed), False (failed) or None (not decided yet) for the evidence of these counts,
    at look `look` (1, 2, ...) of at most `looks`: pass on the point estimate, fail on the bound
    at `corrected_level(looks)`, and pass a worker still not decided at the last look."""
    if balanced_accuracy(present_right, present, absent_right, absent) >= pass_score:
        return True
    if upper_bound(present_right, present, absent_right, absent, corrected_level(looks)) < pass_score:
        return False
    return True if look >= looks else None


def below_on_gold(right: int, total: int, mark: float, level: float = LEVEL) -> bool:
    """Whether gold shows, with `level` credibility, an accuracy below `mark`: the upper bound of
    Beta(1 + right, 1 + wrong) is under it. The one rule for flagging a person on gold answers
    (scoring.runs.workers): a point estimate alone (2 wrong of 2) never does (0 answers: never)."""
    return total > 0 and upper_bound(right, total, 0, 0, level) < mark
