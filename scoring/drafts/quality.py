"""How good machine drafts are against human ACUs: one-to-one matching and the Lite2.x criterion.

Pure numpy/scipy: the callers pass similarity matrices and judged probabilities.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment


def match_one_to_one(similarity: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """Pairs (draft, human ACU) of a maximum-weight one-to-one matching whose similarity is at
    least `threshold` (Hungarian algorithm on the similarities; pairs below the threshold do not count)."""
    similarity = np.asarray(similarity, dtype=float)
    if similarity.size == 0:
        return []
    rows, cols = linear_sum_assignment(-similarity)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=False) if similarity[r, c] >= threshold]


def precision_recall_f1(matched: int, drafts: int, human: int) -> dict:
    """Micro-averaged: matched drafts over all drafts, matched human ACUs over all human ACUs."""
    precision = matched / drafts if drafts else 0.0
    recall = matched / human if human else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "matched": matched,
        "drafts": drafts,
        "human_acus": human,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def symmetric_similarity(forward: np.ndarray, backward: np.ndarray) -> np.ndarray:
    """Harmonic mean of P(draft in human ACU) and P(human ACU in draft): high only when each
    contains the other (a judge's presence probability is one-directional)."""
    forward, backward = np.asarray(forward, dtype=float), np.asarray(backward, dtype=float)
    total = forward + backward
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 2 * forward * backward / np.where(total > 0, total, 1), 0.0)


def sentence_sums(p: np.ndarray, unit_sentence: np.ndarray, n_sentences: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence: the sum over its units of `p` (units x systems) and its unit count."""
    p = np.asarray(p, dtype=float).reshape(len(unit_sentence), -1)
    sums = np.zeros((n_sentences, p.shape[1]))
    np.add.at(sums, np.asarray(unit_sentence, dtype=int), p)
    counts = np.bincount(np.asarray(unit_sentence, dtype=int), minlength=n_sentences).astype(float)
    return sums, counts


CRITERIA = ("abs", "spread")


def sentence_errors(human_sums, human_counts, draft_sums, draft_counts, criterion: str = "abs") -> np.ndarray:
    """Lite2.x's criterion per sentence (`abs`): mean over the document's system summaries of
    |machine score of the sentence's human ACUs − machine score of its drafts|, a score being
    the mean presence probability of the sentence's units (0 when it has none).

    `spread`: the standard deviation over the summaries of that difference, i.e. only the part
    that differs between systems (a constant offset changes no correlation)."""

    def mean(sums, counts):
        counts = np.asarray(counts, dtype=float)[:, None]
        return np.divide(sums, counts, out=np.zeros_like(sums, dtype=float), where=counts > 0)

    difference = mean(human_sums, human_counts) - mean(draft_sums, draft_counts)
    if criterion == "spread":
        return difference.std(axis=1)
    if criterion != "abs":
        raise ValueError(f"Unknown criterion {criterion!r}: use abs or spread.")
    return np.abs(difference).mean(axis=1)
