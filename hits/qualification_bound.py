"""How sure a qualification sheet is: the upper confidence bound of balanced accuracy. Pure (scipy).

Balanced accuracy is the mean of the share right among present facts and among absent ones.
Each class's accuracy is bounded by the Clopper-Pearson upper distribution of its counts,
Beta(1 + right, wrong): its `level` quantile is the exact one-sided Clopper-Pearson upper
bound (the accuracy at which `right` or fewer would happen only 1 - `level` of the time), and
with nothing wrong it is a point mass at 1 (the bound is 1). A confidence bound, not a credible
one: the uniform prior's posterior Beta(1 + right, 1 + wrong) used before pulled each class
toward 50%, so its bound sat too low at a high mark and failed a worker at the mark more often
than its level said. One class's Clopper-Pearson bound is conservative: it is below a worker's
true accuracy at most 1 - `level` of the time, whatever that accuracy. The mean of two classes
has no such proof; computed exactly (tests/test_qualification_bound.py) it stays conservative
at the marks, sheet sizes and class splits checked.

For two classes the two distributions are taken independent and the bound is the `level`
quantile of their mean, computed exactly (up to rounding): the CDF of the sum X + Y is the
integral of pdf_X(t) * CDF_Y(s - t) over t (a convolution); for these integer parameters pdf_X
is a polynomial of degree (facts of X) - 1 and CDF_Y one of degree (facts of Y), so Gauss-Legendre
quadrature with half the facts as nodes (rounded up) integrates it exactly; its quantile is found
by root finding (to 1e-10). A class all right (the point mass at 1) shifts the other one's
distribution by 1: the bound is then (1 + the other class's bound) / 2. A class without facts is
left out, as the score leaves it out (the bound is then that one class's Clopper-Pearson bound);
no facts at all bound nothing (1.0).

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


def class_upper_bound(right: int, total: int, level: float = LEVEL) -> float:
    """The one-sided Clopper-Pearson upper bound at `level` of one class's accuracy, `right` of
    `total`: the `level` quantile of Beta(1 + right, wrong); 1 when nothing is wrong."""
    wrong = total - right
    return 1.0 if wrong == 0 else float(stats.beta.ppf(level, 1 + right, wrong))


def upper_bound(present_right: int, present: int, absent_right: int, absent: int, level: float = LEVEL) -> float:
    """The one-sided upper confidence bound at `level` of the balanced accuracy (module docstring)."""
    classes = [(right, n) for right, n in ((present_right, present), (absent_right, absent)) if n]
    if not classes:
        return 1.0
    if len(classes) == 1:
        return class_upper_bound(*classes[0], level)
    (right1, n1), (right2, n2) = classes
    if right1 == n1 or right2 == n2:  # a point mass at 1 shifts the other class by 1
        other = (right2, n2) if right1 == n1 else (right1, n1)
        return (1.0 + class_upper_bound(*other, level)) / 2
    a1, b1, a2, b2 = 1 + right1, n1 - right1, 1 + right2, n2 - right2
    nodes, weights = leggauss((n1 + n2 + 1) // 2)  # exact to degree n1 + n2 - 1, the integrand's

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
    """Whether gold shows, with `level` confidence, an accuracy below `mark`: the one-sided
    Clopper-Pearson upper bound of `right` of `total` is under it (a worker at the mark is flagged
    at most 1 - `level` of the time). The one rule for flagging a person on gold answers
    (scoring.runs.workers): a point estimate alone (2 wrong of 2) never does (0 answers: never)."""
    return total > 0 and upper_bound(right, total, 0, 0, level) < mark
