"""Sentence features for the budget regressor, from the sentence text and its drafts (pure)."""

import re

import numpy as np

from annotation.text import content_words, words

FEATURES = (
    "words",
    "content_words",
    "clauses",
    "coordinations",
    "numbers",
    "capitalised",
    "quotes",
    "drafts",
    "draft_words",
    "coverage",
    "draft_score_mean",
    "draft_score_sd",
)
_CLAUSE = re.compile(r",|;|:|\b(?:who|which|that|because|after|before|while|when|although|but)\b", re.IGNORECASE)
_COORD = re.compile(r"\b(?:and|or|but)\b|&", re.IGNORECASE)
_NUMBER = re.compile(r"\d")


def sentence_features(
    sentence: str, drafts: list[str], draft_scores=None, other_drafts: list[list[str]] | None = None
) -> list[float]:
    """The values of FEATURES for one sentence, and with `other_drafts` (the drafts of other
    drafters) the drafters' agreement: mean best Jaccard of content words between drafts.

    `draft_scores`: the machine score of the sentence's drafts in each system summary of its
    document (mean presence probability; known before any human writes an ACU)."""
    draft_scores = np.asarray(draft_scores if draft_scores is not None else [0.0], dtype=float)
    tokens = sentence.split()
    sentence_words = content_words(sentence)
    covered = set().union(*(content_words(d) for d in drafts)) if drafts else set()
    row = [
        len(tokens),
        len(sentence_words),
        len(_CLAUSE.findall(sentence)) + 1,
        len(_COORD.findall(sentence)),
        sum(1 for t in tokens if _NUMBER.search(t)),
        sum(1 for t in tokens[1:] if t[:1].isupper()),
        sentence.count('"') + sentence.count("'") + sentence.count("``"),
        len(drafts),
        float(np.mean([len(words(d)) for d in drafts])) if drafts else 0.0,
        len(covered & sentence_words) / len(sentence_words) if sentence_words else 1.0,
        float(draft_scores.mean()),
        float(draft_scores.std()),
    ]
    for others in other_drafts or []:
        row.append(agreement(drafts, others))
    return [float(x) for x in row]


def agreement(a: list[str], b: list[str]) -> float:
    """Mean, over the drafts of both lists, of the best content-word Jaccard with the other list."""
    if not a or not b:
        return 0.0

    def best(x, ys):
        wx = content_words(x)
        return max(
            (len(wx & content_words(y)) / len(wx | content_words(y)) if wx | content_words(y) else 0.0) for y in ys
        )

    return float(np.mean([best(x, b) for x in a] + [best(y, a) for y in b]))
