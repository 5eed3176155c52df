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


def length_penalty(summary_words, reference_words, alpha: float):
    """exp(min(0, (1 - |s|/|r|) / alpha)): 1 for summaries no longer than the reference."""
    ratio = np.asarray(summary_words, dtype=float) / np.asarray(reference_words, dtype=float)
    return np.exp(np.minimum(0.0, (1.0 - ratio) / alpha))


def normalized_acu_score(score, summary_words, reference_words, alpha: float):
    """Length-normalized ACU score f_norm = exp(min(0, (1 - |s|/|r|) / alpha)) * f."""
    return length_penalty(summary_words, reference_words, alpha) * np.asarray(score, dtype=float)


# --- Vectorized grouping and scores from flat judgment arrays -------------------------------
# One row per judgment: (summary_id, acu_id, worker_id, present). The helpers below turn ids
# into dense group codes so that per-group sums are np.bincount calls instead of Python loops.


def codes_1d(key):
    """(codes, uniques) of one key array: codes index the sorted uniques."""
    key = np.asarray(key)
    if key.size == 0:
        return np.zeros(0, dtype=np.intp), key[:0]
    if key.dtype.kind == "b":
        key = key.view(np.uint8)
    if key.dtype.kind not in "iu":
        uniques, codes = np.unique(key, return_inverse=True)
        return codes.ravel().astype(np.intp, copy=False), uniques
    lo, hi = int(key.min()), int(key.max())
    if hi - lo <= 4 * key.size + 1024:
        # Dense ids (database keys usually are): a lookup table beats sorting.
        shifted = (key - lo).astype(np.intp, copy=False)
        seen = np.zeros(hi - lo + 1, dtype=bool)
        seen[shifted] = True
        if seen.all():  # already dense codes (group codes passed on): nothing to renumber
            return shifted, np.arange(lo, hi + 1).astype(key.dtype)
        remap = np.cumsum(seen, dtype=np.intp) - 1
        return remap[shifted], (np.flatnonzero(seen) + lo).astype(key.dtype)
    change = key[1:] != key[:-1]
    if np.count_nonzero(change) < key.size // 4:
        # Runs of equal keys (rows as the database returns them, grouped by assignment): only
        # one key per run needs sorting.
        starts = np.flatnonzero(np.concatenate([[True], change]))
        run_codes, uniques = codes_1d(key[starts])
        return np.repeat(run_codes, np.diff(np.append(starts, key.size))), uniques
    ordered = bool(np.all(key[1:] >= key[:-1]))
    perm = None if ordered else np.argsort(key)
    sorted_key = key if ordered else key[perm]
    new = np.empty(key.size, dtype=bool)
    new[0] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=new[1:])
    sorted_codes = np.cumsum(new, dtype=np.intp) - 1
    if ordered:
        return sorted_codes, sorted_key[new]
    codes = np.empty(key.size, dtype=np.intp)
    codes[perm] = sorted_codes
    return codes, sorted_key[new]


def _combine(codes, n_first, more, n_more):
    """Group codes of (first, second) code pairs; per group its first and second code."""
    if n_first * n_more > 4 * codes.size + 1024:
        # A first key usually meets few second keys (a summary, its reference's ACUs): offset
        # the second codes within their first key so that a lookup table fits.
        low = np.full(n_first, n_more, dtype=np.intp)
        np.minimum.at(low, codes, more)
        local = more - low[codes]
        width = int(local.max()) + 1
        if n_first * width <= 4 * codes.size + 1024:
            combined, kept = codes_1d(codes * width + local)
            return combined, kept // width, low[kept // width] + kept % width
    combined, kept = codes_1d(codes.astype(np.int64) * n_more + more)
    return combined, kept // n_more, kept % n_more


def group_codes(*keys):
    """Dense group code of each row for the combined keys, and the keys of each group.

    Returns ``(codes, uniques)``: ``codes[i]`` in ``0..g-1`` numbers the distinct key tuples in
    lexicographic order; ``uniques`` is a tuple of arrays (one per key) of length ``g``.
    """
    codes, first = codes_1d(keys[0])
    uniques = [first]
    for key in keys[1:]:
        more, values = codes_1d(key)
        codes, first_code, more_code = _combine(codes, len(uniques[0]), more, len(values))
        uniques = [u[first_code] for u in uniques] + [values[more_code]]
    return codes, tuple(uniques)


def acu_labels(summary_ids, acu_ids, present):
    """Majority label of every judged (summary, ACU) pair from one row per judgment.

    Returns ``(summaries, acus, label, present_votes, total_votes)`` per pair; a tie is not
    present (shared/design/scoring.md, "Summary scores").
    """
    codes, (summaries, acus) = group_codes(summary_ids, acu_ids)
    total = np.bincount(codes, minlength=len(summaries))
    votes = np.bincount(codes, weights=np.asarray(present, dtype=float), minlength=len(summaries))
    return summaries, acus, majority_present(votes, total), votes, total


def acu_scores_by_summary(summary_ids, acu_ids, present, acu_counts=None):
    """Un-normalized ACU score of every judged summary: ``(summaries, scores)``.

    ``acu_counts`` (optional, one value per judgment row) is ``|A|``, the number of ACUs of the
    summary's reference; by default the number of distinct ACUs judged in that summary.
    """
    summaries, _, label, _, _ = acu_labels(summary_ids, acu_ids, present)
    per_pair, keys = codes_1d(summaries)
    present_acus = np.bincount(per_pair, weights=label.astype(float), minlength=len(keys))
    if acu_counts is None:
        denominators = np.bincount(per_pair, minlength=len(keys)).astype(float)
    else:
        # Same set of summaries, so the codes index the same sorted keys.
        s_codes, _ = codes_1d(summary_ids)
        denominators = np.zeros(len(keys))
        denominators[s_codes] = np.asarray(acu_counts, dtype=float)
    return keys, present_acus / denominators
