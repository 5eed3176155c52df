"""ACU scores of summaries and systems straight from the stored judgments (no bootstrap):
the quick view used by dataset pages and tests; `services.compute_scores` adds CIs."""

from dataclasses import dataclass

import numpy as np


@dataclass
class SystemScore:
    system: str
    documents: int
    acu: float
    normalized_acu: float
    length: float


def summary_scores(dataset, batch=None) -> dict[int, tuple[float, float]]:
    """{summary_id: (acu score, normalized acu score)} for every summary with judgments."""
    from scoring.runs.services import summary_scores_arrays

    table, _, pos, scores, normalized = summary_scores_arrays(dataset, batch)
    return {int(sid): (float(a), float(n)) for sid, a, n in zip(table.ids[pos], scores, normalized, strict=False)}


def system_scores(dataset, batch=None) -> list[SystemScore]:
    """Per system: mean over its judged documents (in document order) of the summary scores."""
    from scoring.runs.services import document_mean, summary_scores_arrays

    table, _, pos, scores, normalized = summary_scores_arrays(dataset, batch)
    result = []
    for sid in sorted(set(table.system[pos].tolist()), key=lambda s: table.system_names[s]):
        mine = table.system[pos] == sid
        result.append(
            SystemScore(
                table.system_names[sid],
                int(mine.sum()),
                document_mean(table, pos, mine, scores),
                document_mean(table, pos, mine, normalized),
                float(np.mean(table.words[pos][mine])),
            )
        )
    return result
