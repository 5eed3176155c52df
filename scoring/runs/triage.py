"""Scores of a triage round: the crowd's majority where the machine was unsure, the machine's
label elsewhere. Machine labels enter as one vote per decided pair from a pseudo worker (id -1)
on pairs no HIT asked about, so the majority of every crowd-judged pair stays the crowd's (an adaptive
or `pairs` round's: its posterior); the pairs of a gold HIT (a `pairs` batch's triage keeps its gold HITs whole)
are the crowd's, never the machine's, as are those of a HIT handed out before a held-back triage turned on
(hits.services.triage_when); while such a triage is pending or off, no machine label counts. The
alphas and the workers table keep reading the human judgments only."""

import numpy as np

from hits.selectors import covered_summaries
from hits.triage import machine_labels
from scoring.runs.data import Judgments

MACHINE_WORKER = -1


def machine_votes(batch) -> Judgments:
    """One vote per pair the machine decides, on the summaries the round covers (its HITs' and those it
    decided wholly), on the pairs no HIT of the batch carries: a gold HIT's pairs, and those of a HIT
    handed out before a held-back triage turned on (it keeps all its ACUs), are the crowd's. None while
    a held-back triage is pending or once it is off (hits.services.triage_when: the judge only a prior)."""
    labels: dict[tuple[int, int], bool] = {}
    if batch.machine_decides:
        whole, carried = carried_pairs(batch)
        found = machine_labels(batch.triage_run, batch.triage_confidence, covered_summaries(batch) - whole)
        labels = {k: v for k, v in found.items() if k not in carried}
    keys = sorted(labels)
    summary = np.array([k[0] for k in keys], dtype=np.int64)
    acu = np.array([k[1] for k in keys], dtype=np.int64)
    present = np.array([labels[k] for k in keys], dtype=bool)
    n = len(keys)
    return Judgments(summary, acu, np.full(n, MACHINE_WORKER, dtype=np.int64), present, np.zeros(n, dtype=bool))


def carried_pairs(batch) -> tuple[set[int], set[tuple[int, int]]]:
    """What the batch's HITs carry: the summaries a HIT carries whole (a gold HIT, or one with no list of
    ACUs: hits.models.HIT.task_acus) and the (summary, ACU) pairs the other HITs list."""
    whole = set(batch.hits.filter(gold_answers__isnull=False).values_list("summary_id", flat=True))
    carried: set[tuple[int, int]] = set()
    for summary_id, acu_ids in batch.hits.values_list("summary_id", "acu_ids").order_by():
        if not acu_ids:
            whole.add(summary_id)
        else:
            carried.update((summary_id, int(a)) for a in acu_ids)
    return whole, carried


def with_machine_labels(batch, judgments: Judgments) -> Judgments:
    votes = machine_votes(batch)
    return Judgments(
        *(
            np.concatenate([getattr(judgments, f), getattr(votes, f)])
            for f in ("summary", "acu", "worker", "present", "excluded")
        )
    )


def decided_share(batch) -> dict:
    """How much of the round the machine decided: its pairs among the run's pairs of the summaries
    the round covers."""
    from hits.models import MachineJudgment

    total = MachineJudgment.objects.filter(run=batch.triage_run, summary_id__in=covered_summaries(batch)).count()
    decided = len(machine_votes(batch))
    return {
        "run": batch.triage_run_id,
        "confidence": batch.triage_confidence,
        "pairs": decided,
        "of": total,
        "share": decided / total if total else 0.0,
    }
