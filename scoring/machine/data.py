"""Reading what machine judging needs: every (summary, ACU) pair of a dataset with its texts,
and the human labels (majority of the counted judgments) per pair, by kind of round."""

from dataclasses import dataclass

import numpy as np

from annotation.models import ACU, ReferenceSentence, Summary
from hits.latest_labels import latest_per_worker
from hits.models import Batch
from hits.selectors import counted_judgments


@dataclass
class Pairs:
    """One row per (summary, ACU of its reference), grouped by summary in document order."""

    summary: np.ndarray
    acu: np.ndarray
    document: np.ndarray
    system: np.ndarray
    acu_texts: list
    summary_texts: dict  # summary id -> text

    def __len__(self):
        return len(self.summary)

    def texts(self, rows) -> list[tuple[str, str]]:
        return [(self.acu_texts[i], self.summary_texts[int(self.summary[i])]) for i in rows]

    def keys(self) -> list[tuple[int, int]]:
        return list(zip(self.summary.tolist(), self.acu.tolist(), strict=False))


def load_pairs(dataset, summary_ids=None) -> Pairs:
    acus_by_document: dict[int, list[tuple[int, str]]] = {}
    for pk, document_id, text in (
        ACU.objects.filter(reference__document__dataset=dataset)
        .order_by("reference__document__position", "sentence__position", "position", "pk")
        .values_list("pk", "reference__document_id", "text")
    ):
        acus_by_document.setdefault(document_id, []).append((pk, text))
    summaries = Summary.objects.filter(document__dataset=dataset)
    if summary_ids is not None:
        summaries = summaries.filter(pk__in=list(summary_ids))
    rows = summaries.order_by("document__position", "system__name", "pk").values_list(
        "pk", "document_id", "system_id", "text"
    )
    summary, acu, document, system, acu_texts, texts = [], [], [], [], [], {}
    for pk, document_id, system_id, text in rows:
        texts[pk] = text
        for acu_id, acu_text in acus_by_document.get(document_id, []):
            summary.append(pk)
            acu.append(acu_id)
            document.append(document_id)
            system.append(system_id)
            acu_texts.append(acu_text)
    as_array = lambda values: np.asarray(values, dtype=np.int64)  # noqa: E731 - a one-line key function
    return Pairs(as_array(summary), as_array(acu), as_array(document), as_array(system), acu_texts, texts)


def reference_texts(dataset) -> list[str]:
    """Each reference of the dataset as one text (its sentences in order, joined by spaces)."""
    texts: dict[int, list[str]] = {}
    for reference_id, text in (
        ReferenceSentence.objects.filter(reference__document__dataset=dataset)
        .order_by("reference_id", "position")
        .values_list("reference_id", "text")
    ):
        texts.setdefault(reference_id, []).append(text)
    return [" ".join(parts) for parts in texts.values()]


def human_labels(dataset, *, kinds: tuple[str, ...] | None = None, batch=None) -> dict[tuple[int, int], bool]:
    """{(summary id, acu id): majority label} of the counted human judgments of one round, of
    some kinds of round (`Batch.EXPERT_KINDS`: the expert labels; crowd), or of all human rounds.
    A tie is not present. A worker who judged a pair in several of those rounds is one vote, their
    latest (`latest_per_worker`, as the scores and the gold answers count them)."""
    qs = counted_judgments(dataset, batch).exclude(assignment__hit__batch__kind=Batch.Kind.MACHINE)
    if kinds is not None:
        qs = qs.filter(assignment__hit__batch__kind__in=kinds)
    columns = ("assignment__hit__summary_id", "acu_id", "assignment__worker_id", "pk", "present")
    rows = np.array(list(qs.order_by().values_list(*columns)), dtype=np.int64).reshape(-1, len(columns))
    rows = rows[latest_per_worker(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])]
    votes: dict[tuple[int, int], list[int]] = {}
    for summary_id, acu_id, present in rows[:, [0, 1, 4]].tolist():
        tally = votes.setdefault((summary_id, acu_id), [0, 0])
        tally[0] += present
        tally[1] += 1
    return {key: 2 * p > n for key, (p, n) in votes.items()}


def label_sources(dataset, label_round=None) -> dict[str, dict[tuple[int, int], bool]]:
    """The label sets a judge run is measured against: the chosen round, else the expert labels
    (`Batch.EXPERT_KINDS`) and the crowd majority, each when the dataset has it."""
    if label_round is not None:
        return {"round": human_labels(dataset, batch=label_round)}
    sources = {}
    expert = human_labels(dataset, kinds=Batch.EXPERT_KINDS)
    if expert:
        sources["expert"] = expert
    crowd = human_labels(dataset, kinds=Batch.CROWD_KINDS)
    if crowd:
        sources["crowd"] = crowd
    return sources
