"""Scores with human ACUs on some sentences and drafts on the rest, and their correlation with
the all-human scores (the Lite2.x budget curve). Pure numpy."""

import numpy as np

from scoring.stats.correlation import summary_level, system_level


def mixed_scores(sentence_document, human_sums, human_counts, draft_sums, draft_counts, human_mask, n_documents):
    """documents x systems: per summary, the mean presence probability over the units of its
    reference, taking a sentence's human ACUs where `human_mask` is set and its drafts elsewhere."""
    mask = np.asarray(human_mask, dtype=bool)
    sums = np.where(mask[:, None], human_sums, draft_sums)
    counts = np.where(mask, human_counts, draft_counts)
    doc = np.asarray(sentence_document, dtype=int)
    total = np.zeros((n_documents, sums.shape[1]))
    np.add.at(total, doc, sums)
    n = np.bincount(doc, weights=counts, minlength=n_documents)[:, None]
    return np.divide(total, n, out=np.zeros_like(total), where=n > 0)


def correlations(human: np.ndarray, machine: np.ndarray) -> dict:
    return {
        "summary_pearson": summary_level(human, machine, "pearson"),
        "summary_kendall": summary_level(human, machine, "kendall"),
        "system_pearson": system_level(human, machine, "pearson"),
        "system_kendall": system_level(human, machine, "kendall"),
    }


def budget_point(human_scores, share, predicted, tables, *, random_draws: int = 20, seed: int = 0, oracle=None) -> dict:
    """Correlations with the all-human scores at one human share: for the regressor's choice and
    the mean (and spread) over `random_draws` random choices of the same size; with `oracle`
    (the true sentence errors) also for the best possible choice, as a ceiling."""
    from scoring.drafts.unit_budget.regressor import choose_human

    chosen = choose_human(predicted, share)
    regressor = correlations(human_scores, mixed_scores(*tables, chosen, human_scores.shape[0]))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(random_draws):
        mask = np.zeros(len(chosen), dtype=bool)
        mask[rng.choice(len(chosen), size=int(chosen.sum()), replace=False)] = True
        draws.append(correlations(human_scores, mixed_scores(*tables, mask, human_scores.shape[0])))
    random = {k: float(np.mean([d[k] for d in draws])) for k in regressor}
    random_sd = {k: float(np.std([d[k] for d in draws])) for k in regressor}
    extra = {}
    if oracle is not None:
        extra["oracle"] = correlations(
            human_scores, mixed_scores(*tables, choose_human(oracle, share), human_scores.shape[0])
        )
    return {
        **extra,
        "human_share": share,
        "human_sentences": int(chosen.sum()),
        "sentences": len(chosen),
        "regressor": regressor,
        "random": random,
        "random_sd": random_sd,
        "random_draws": random_draws,
    }
