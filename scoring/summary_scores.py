"""ACU scores of summaries and systems from the judgments stored in the database."""
from dataclasses import dataclass

import numpy as np
from django.db.models import Count

from annotation.models import ACU, Summary

from .aggregation import majority_present, normalized_acu_score
from .judgments import counted_judgments


@dataclass
class SystemScore:
    system: str
    documents: int
    acu: float
    normalized_acu: float
    length: float


def summary_scores(dataset, batch=None) -> dict[int, tuple[float, float]]:
    """{summary_id: (acu score, normalized acu score)} for every summary with judgments.

    Per (summary, ACU) the workers' majority decides (a tie is not present); the score
    divides the present ACUs by all ACUs of the reference (shared/design/scoring.md).
    """
    rows = np.array(
        list(counted_judgments(dataset, batch).values_list("assignment__hit__summary_id", "acu_id", "present")),
        dtype=np.int64,
    ).reshape(-1, 3)
    if rows.size == 0:
        return {}
    pairs, inverse = np.unique(rows[:, :2], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    present = np.bincount(inverse, weights=rows[:, 2], minlength=len(pairs))
    total = np.bincount(inverse, minlength=len(pairs))
    is_present = majority_present(present, total)
    summary_ids, per_pair = np.unique(pairs[:, 0], return_inverse=True)
    present_acus = np.bincount(per_pair.ravel(), weights=is_present, minlength=len(summary_ids))

    info = {
        s["pk"]: s
        for s in Summary.objects.filter(pk__in=summary_ids.tolist()).values(
            "pk", "word_count", "document__reference__word_count", "document__reference__pk"
        )
    }
    acu_counts = dict(
        ACU.objects.filter(reference__document__dataset=dataset)
        .values_list("reference_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    result = {}
    alpha = dataset.length_alpha
    for sid, n_present in zip(summary_ids.tolist(), present_acus.tolist()):
        s = info[sid]
        score = n_present / acu_counts[s["document__reference__pk"]]
        norm = float(normalized_acu_score(score, s["word_count"], s["document__reference__word_count"], alpha))
        result[sid] = (score, norm)
    return result


def system_scores(dataset, batch=None) -> list[SystemScore]:
    """Per system: mean over its judged documents of the summary scores."""
    scores = summary_scores(dataset, batch)
    by_system: dict[str, list] = {}
    for sid, system, words in Summary.objects.filter(pk__in=list(scores)).values_list("pk", "system__name", "word_count"):
        by_system.setdefault(system, []).append((*scores[sid], words))
    table = []
    for system, values in sorted(by_system.items()):
        arr = np.array(values, dtype=float)
        table.append(SystemScore(system, len(values), float(arr[:, 0].mean()), float(arr[:, 1].mean()), float(arr[:, 2].mean())))
    return table
