"""Triage's confidence chosen out of sample (issue 43). Pure numpy; no Django imports.

A triage batch lets the machine decide the pairs it is sure of (P >= c or P <= 1 - c) and sends
the rest to the crowd. Choosing c on the documents the saving is then reported on flatters it. Here
the documents are split into folds; for each fold, c is chosen on the other folds' documents and
applied to that fold's, so every document's labels come from a c chosen without it (cross-fitting).

The rule that chooses c on a set of documents: the smallest c of the grid (the largest saving)
whose combined labels (the machine's where it decides, the human ones elsewhere) keep, at c and at
every larger c of the grid, agreement with the human labels at least `min_agreement` and the
largest change of any system's score at most `max_change` (scores: a summary's share of ACUs
present, a system's the mean over documents). No such c: the fold's pairs all go to the crowd.

The held-out figures (each document with the c of its fold) come with 95% percentile bootstrap
intervals over documents: the share of crowd judgments saved, the agreement with the human
labels, the largest change of a system's score and, only with at least MIN_SYSTEMS_FOR_TAU
systems, the system-level Kendall tau (with few systems one swapped pair decides it: with 10
systems one swap costs 0.044).
"""

import numpy as np

from . import correlation
from .bootstrap import percentile_interval
from .machine_figures import TRIAGE_GRID, matrix, summary_table

DEFAULT_FOLDS = 5
DEFAULT_MIN_AGREEMENT = 0.97
DEFAULT_MAX_CHANGE = 0.02
MIN_SYSTEMS_FOR_TAU = 20  # one swapped pair moves tau by at most 2 / (20 * 19) = 0.005
RESAMPLES = 1000
# The confidence a run suggests for the lab's new documents (`suggest`) and the one app+judge uses
# (bench/allocation_bench.py): chosen on the documents with expert labels, a gold round of a tenth
# of the documents or so. Its criterion is the agreement alone, chosen on REALSumm documents 0-49,
# seeds 0-1 (bench/RESULTS.md): on 5 documents the largest change of a system's score is too noisy
# to bound (no c kept it within 0.02 there), so the bound is off (1.0: a share cannot move more).
SUGGEST_MIN_AGREEMENT = DEFAULT_MIN_AGREEMENT
SUGGEST_MAX_CHANGE = 1.0
# The confidences it chooses among: the grid's that a pairs batch's triage_confidence takes
# (0.51-0.999, hits.batch_fields; a test holds the two together): 0.5 would decide every pair.
SUGGEST_GRID = tuple(c for c in TRIAGE_GRID if 0.51 <= c <= 0.999)


def _combined(probability, human, c):
    decided = (probability >= c) | (probability <= 1 - c) if c is not None else np.zeros(len(human), dtype=bool)
    return decided, np.where(decided, probability >= 0.5, human)


def _system_change(human, combined, summary, document, system) -> float:
    _, systems, h = matrix(summary_table(summary, document, system, human))
    _, _, m = matrix(summary_table(summary, document, system, combined), systems)
    return float(np.max(np.abs(h.mean(axis=0) - m.mean(axis=0)))) if h.size else 0.0


def choose(probability, human, summary, document, system, grid=TRIAGE_GRID, *, min_agreement, max_change):
    """The c the rule (module docstring) picks on these pairs, or None."""
    best = None
    for c in sorted(grid, reverse=True):
        _, combined = _combined(probability, human, c)
        agreement = float(np.mean(combined == human)) if len(human) else 0.0
        if agreement < min_agreement or _system_change(human, combined, summary, document, system) > max_change:
            break
        best = float(c)
    return best


def suggest(probability, human, summary, document, system, grid=SUGGEST_GRID) -> dict:
    """The confidence to triage new documents at, chosen by `choose` with the SUGGEST_ criterion on
    these labelled pairs (their probabilities out of fold), with what it was chosen on. c None: no
    c of the grid keeps the agreement, so the judge should decide nothing."""
    probability, human = np.asarray(probability, dtype=float), np.asarray(human, dtype=bool)
    c = choose(
        probability,
        human,
        np.asarray(summary),
        np.asarray(document),
        np.asarray(system),
        grid,
        min_agreement=SUGGEST_MIN_AGREEMENT,
        max_change=SUGGEST_MAX_CHANGE,
    )
    decided, _ = _combined(probability, human, c)
    return {
        "c": c,
        "documents": len(np.unique(np.asarray(document))),
        "pairs": len(human),
        "decided_share": float(decided.mean()) if len(human) else 0.0,
        "criteria": {"min_agreement": SUGGEST_MIN_AGREEMENT, "max_system_change": SUGGEST_MAX_CHANGE},
    }


def fold_of_documents(document, folds: int, seed: int = 0) -> dict:
    """{document: fold}: the documents shuffled by `seed`, dealt round-robin into `folds` folds."""
    uniques = np.unique(np.asarray(document))
    order = np.random.default_rng(seed).permutation(len(uniques))
    return {int(uniques[i]): n % folds for n, i in enumerate(order)}


def _interval(values) -> list:
    low, high = percentile_interval(np.asarray(values, dtype=float), 0.95)
    return [float(low), float(high)]


def held_out_figures(probability, human, decided, combined, summary, document, system, resamples, seed) -> dict:
    """Saving, agreement, largest system change (and tau with enough systems), each [value, low,
    high] with a bootstrap over documents."""
    docs, codes = np.unique(np.asarray(document), return_inverse=True)
    pairs = np.bincount(codes, minlength=len(docs)).astype(float)
    saved = np.bincount(codes, weights=decided.astype(float), minlength=len(docs))
    agree = np.bincount(codes, weights=(combined == human).astype(float), minlength=len(docs))
    _, systems, h = matrix(summary_table(summary, document, system, human))
    rows, _, m = matrix(summary_table(summary, document, system, combined), systems)
    row_doc = np.searchsorted(docs, rows)  # each score row's document, as an index into docs
    enough = len(systems) >= MIN_SYSTEMS_FOR_TAU

    def figures(weights: np.ndarray) -> list[float]:
        """The figures over documents drawn `weights` times each."""
        w = weights[row_doc].astype(float)
        out = [weights @ saved / (weights @ pairs), weights @ agree / (weights @ pairs), 0.0]
        if w.sum() and len(systems):
            hs, ms = w @ h / w.sum(), w @ m / w.sum()
            out[2] = float(np.max(np.abs(hs - ms)))
            if enough:
                out.append(float(correlation.kendall(hs, ms)))
        elif enough:
            out.append(float("nan"))
        return out

    value = figures(np.ones(len(docs)))
    rng = np.random.default_rng(seed)
    draws = np.array(
        [figures(np.bincount(rng.integers(0, len(docs), len(docs)), minlength=len(docs))) for _ in range(resamples)]
    )
    names = ["saved_share", "agreement", "max_system_change"] + (["system_kendall"] if enough else [])
    out: dict = {name: [float(value[i]), *_interval(draws[:, i])] for i, name in enumerate(names)}
    out.setdefault("system_kendall", None)
    out.update({"documents": len(docs), "systems": len(systems), "pairs": int(pairs.sum())})
    return out


def crossfit(
    probability,
    human,
    summary,
    document,
    system,
    grid=TRIAGE_GRID,
    *,
    folds: int = DEFAULT_FOLDS,
    min_agreement: float = DEFAULT_MIN_AGREEMENT,
    max_change: float = DEFAULT_MAX_CHANGE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict:
    """The cross-fitted triage of these labelled pairs (module docstring): per fold the c chosen on
    the other folds and the documents it was chosen on and applied to; the held-out figures."""
    probability, human = np.asarray(probability, dtype=float), np.asarray(human, dtype=bool)
    summary, document, system = (np.asarray(a) for a in (summary, document, system))
    fold_of = fold_of_documents(document, folds, seed)
    if len(set(fold_of.values())) < 2:
        raise ValueError("Cross-fitting the triage threshold needs labelled pairs of at least two documents.")
    pair_fold = np.array([fold_of[int(d)] for d in document.tolist()], dtype=int)
    decided = np.zeros(len(human), dtype=bool)
    combined = human.copy()
    per_fold = []
    for k in sorted(set(fold_of.values())):
        train, test = pair_fold != k, pair_fold == k
        c = choose(
            probability[train],
            human[train],
            summary[train],
            document[train],
            system[train],
            grid,
            min_agreement=min_agreement,
            max_change=max_change,
        )
        decided[test], combined[test] = _combined(probability[test], human[test], c)
        per_fold.append(
            {
                "fold": k,
                "c": c,
                "chosen_on": sorted(int(d) for d, f in fold_of.items() if f != k),
                "applied_to": sorted(int(d) for d, f in fold_of.items() if f == k),
                "saved_share": float(decided[test].mean()),
            }
        )
    return {
        "criteria": {"min_agreement": min_agreement, "max_system_change": max_change, "grid": [float(c) for c in grid]},
        "folds": per_fold,
        "held_out": held_out_figures(probability, human, decided, combined, summary, document, system, resamples, seed),
    }
