"""Triage aware of systems (issue 43), measured by the bench only. Pure numpy, no Django:
bench/allocation_bench.py (`pairs+judge`'s `--pair-system-triage`) and tests/test_system_triage.py
import it; the app does not, and its triage (hits.triage) has no per-system rule or cap.

Triage lets a judge decide the pairs it is sure of (P >= c or P <= 1 - c, label P >= 0.5) and the crowd
never sees them. A judge's errors are not spread evenly over the systems (a paraphrasing system's
present ACUs look absent to a judge reading words), so the pairs it decides can move some systems'
scores together and the ranking with them. A lab knows the expert labels of its expert documents only,
but of every system's summary of them; the rules below read only those (`truth` of the expert
documents' pairs, `system` a code 0..n_systems-1 per pair):

- `recalibrate`: each system's probabilities move by an intercept on the logit of its own,
  `system_offsets`: the gap between the logit of its expert pairs' present rate and the logit of the
  judge's mean probability on them (both smoothed by half a pair), shrunk toward 0 by n / (n + strength)
  (n the system's expert pairs). The confidence c is chosen on the expert pairs' probabilities
  recalibrated by offsets fitted without their own document (`crossfit_recalibrated`).
- `gate`: a system's pairs are triaged only if the judge's accuracy on its expert pairs decided at c
  has a Wilson lower bound (`wilson_lower`, z = GATE_Z: one-sided 95%) above `needed`
  (`triaging_systems`); the other systems' pairs all go to the crowd.
- `cap`: no system has more than `factor` times the triaged share of all its pairs; a system above
  keeps its most confident pairs (`capped`).
"""

import numpy as np
from scipy.special import expit

RULES = ("none", "recalibrate", "gate", "cap")
GATE_Z = 1.645  # one-sided 95%
_CLIP = 1e-6


def _logit(p) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), _CLIP, 1 - _CLIP)
    return np.log(p / (1 - p))


def decided_at(probability, c: float | None) -> np.ndarray:
    """The pairs a judge decides at confidence c (none when c is None)."""
    p = np.asarray(probability, dtype=float)
    if c is None:
        return np.zeros(p.shape, dtype=bool)
    return (p >= c) | (p <= 1 - c)


def system_offsets(probability, truth, system, strength: float, n_systems: int) -> np.ndarray:
    """Per system code: n / (n + strength) * (logit((present + 1/2) / (n + 1)) - logit((sum P + 1/2) / (n + 1)))
    over its labelled pairs; 0 for a system without any."""
    system = np.asarray(system, dtype=int)
    n = np.bincount(system, minlength=n_systems).astype(float)
    present = np.bincount(system, weights=np.asarray(truth, dtype=float), minlength=n_systems)
    judged = np.bincount(system, weights=np.asarray(probability, dtype=float), minlength=n_systems)
    gap = _logit((present + 0.5) / (n + 1)) - _logit((judged + 0.5) / (n + 1))
    return n / (n + strength) * gap


def recalibrated(probability, system, offsets) -> np.ndarray:
    """The probabilities with their system's offset added to the logit."""
    return expit(_logit(probability) + np.asarray(offsets, dtype=float)[np.asarray(system, dtype=int)])


def crossfit_recalibrated(probability, truth, system, document, strength: float, n_systems: int) -> np.ndarray:
    """Each labelled pair recalibrated by offsets fitted on the other documents' pairs (to choose c on)."""
    p, truth = np.asarray(probability, dtype=float), np.asarray(truth, dtype=bool)
    system, document = np.asarray(system, dtype=int), np.asarray(document)
    out = np.empty(p.shape, dtype=float)
    for d in np.unique(document):
        mine = document == d
        offsets = system_offsets(p[~mine], truth[~mine], system[~mine], strength, n_systems)
        out[mine] = recalibrated(p[mine], system[mine], offsets)
    return out


def wilson_lower(successes, n, z: float = GATE_Z) -> np.ndarray:
    """Wilson score lower bound of a proportion: (p + z²/2n - z sqrt(p(1 - p)/n + z²/4n²)) / (1 + z²/n); 0
    where n is 0."""
    k, n = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    m = np.maximum(n, 1.0)
    p = k / m
    centre = p + z * z / (2 * m)
    spread = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
    return np.where(n > 0, (centre - spread) / (1 + z * z / m), 0.0)


def triaging_systems(
    probability, truth, system, c: float | None, needed: float, n_systems: int, z: float = GATE_Z
) -> np.ndarray:
    """Per system code: whether the judge's accuracy on its labelled pairs decided at c has a Wilson
    lower bound above `needed` (a system with no pair decided there is not triaged)."""
    p = np.asarray(probability, dtype=float)
    sure = decided_at(p, c)
    right = (p >= 0.5) == np.asarray(truth, dtype=bool)
    system = np.asarray(system, dtype=int)
    n = np.bincount(system[sure], minlength=n_systems)
    k = np.bincount(system[sure], weights=right[sure].astype(float), minlength=n_systems)
    return wilson_lower(k, n, z) > needed


def capped(probability, decided, system, factor: float, n_systems: int) -> np.ndarray:
    """`decided` with each system's decided pairs cut to floor(factor * share * its pairs), share the
    decided share of all pairs; a system over it keeps its most confident pairs (|P - 1/2|, ties by order)."""
    decided = np.asarray(decided, dtype=bool)
    system = np.asarray(system, dtype=int)
    confidence = np.abs(np.asarray(probability, dtype=float) - 0.5)
    share = float(decided.mean()) if decided.size else 0.0
    limit = np.floor(factor * share * np.bincount(system, minlength=n_systems) + 1e-9).astype(int)
    out = np.zeros(decided.shape, dtype=bool)
    for s in range(n_systems):
        mine = np.flatnonzero(decided & (system == s))
        keep = mine[np.argsort(-confidence[mine], kind="stable")[: limit[s]]]
        out[keep] = True
    return out
