"""Majority aggregation and ACU scores (definitions: shared/design/scoring.md, "Summary scores").

Pure numpy; no Django imports.
"""
import numpy as np


def majority_present(present_votes, total_votes):
    """ACU label by majority vote: present when more than half of the votes say present.

    A tie (and an ACU with no vote at all) counts as not present, the PyrXSum practice
    adopted by RoSE.
    """
    present_votes = np.asarray(present_votes)
    total_votes = np.asarray(total_votes)
    return 2 * present_votes > total_votes


def acu_score(labels) -> float:
    """Un-normalized ACU score f(s, A) = |{a in A : a present in s}| / |A|."""
    labels = np.asarray(labels, dtype=float)
    if labels.size == 0:
        return float("nan")
    return float(labels.mean())


def length_penalty(summary_words, reference_words, alpha: float):
    """exp(min(0, (1 - |s|/|r|) / alpha)): 1 for summaries no longer than the reference."""
    ratio = np.asarray(summary_words, dtype=float) / np.asarray(reference_words, dtype=float)
    return np.exp(np.minimum(0.0, (1.0 - ratio) / alpha))


def normalized_acu_score(score, summary_words, reference_words, alpha: float):
    """Length-normalized ACU score f_norm = exp(min(0, (1 - |s|/|r|) / alpha)) * f."""
    return length_penalty(summary_words, reference_words, alpha) * np.asarray(score, dtype=float)
