"""The counted judgments of an export as numpy arrays, grouped per summary and worker.

Both exports start here: the judgments and the ACUs come out of the database as integers, and
the per-judgment work (each
ACU's index in its reference, the order, the majority) is done on arrays, so that what is left
in Python is per worker and summary, not per judgment.
"""

import json
from dataclasses import dataclass

import numpy as np

from annotation.models import ACU
from hits.latest_labels import latest_per_worker
from hits.models import Worker
from hits.selectors import counted_judgments

# The order of a reference's ACUs in every export: by sentence, then position, then id.
ACU_ORDER = ("sentence__position", "position", "pk")


def annotator_key(worker: Worker, dataset) -> str:
    """A worker as every export names them (the RoSE JSONL's annotator, the judgments CSV's worker):
    an expert by their name in the dataset (stored as "<dataset>/<name>", which an import under
    another name changes), a crowd worker by provider and id ("prolific:5f1c...")."""
    if worker.is_expert:
        return worker.external_id.removeprefix(f"{dataset.name}/")
    return f"{worker.provider}:{worker.external_id}"


def dataset_acus(dataset):
    return ACU.objects.filter(reference__document__dataset=dataset)


def integer_rows(queryset, columns: int) -> np.ndarray:
    """The rows of a values_list queryset of `columns` integer (or boolean) columns, none of them
    NULL, as an int64 array of shape (rows, columns)."""
    return np.array(list(queryset), dtype=np.int64).reshape(-1, columns)


def _runs(keys: np.ndarray) -> np.ndarray:
    """Start of each run of equal consecutive keys (a sorted array), and its end as the last item."""
    if keys.size == 0:
        return np.zeros(1, dtype=np.intp)
    return np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1, [keys.size]))


@dataclass
class AcuPlaces:
    """Per ACU id (sorted): its index from 0 in its reference in ACU_ORDER, and that reference's ACU count."""

    ids: np.ndarray
    index: np.ndarray
    count: np.ndarray

    def of(self, acu_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Index in the reference, the reference's ACU count, and the rank of the id."""
        at = np.searchsorted(self.ids, acu_ids)
        return self.index[at], self.count[at], at


def acu_places(dataset) -> AcuPlaces:
    rows = integer_rows(
        dataset_acus(dataset).values_list("pk", "reference_id", "sentence__position", "position").order_by(), 4
    )
    ids, reference = rows[:, 0], rows[:, 1]
    order = np.lexsort((ids, rows[:, 3], rows[:, 2], reference))  # by reference, then ACU_ORDER
    starts = _runs(reference[order])
    lengths = np.diff(starts)
    index, count = np.empty(len(ids), np.int64), np.empty(len(ids), np.int64)
    index[order] = np.arange(len(ids)) - np.repeat(starts[:-1], lengths)
    count[order] = np.repeat(lengths, lengths)
    by_id = np.argsort(ids)
    return AcuPlaces(ids[by_id], index[by_id], count[by_id])


@dataclass
class LabelGroups:
    """The counted judgments sorted by `order`, in groups of one worker on one summary.

    `start[g]:start[g + 1]` are the judgments of group g, whose summary is `summary[g]` and
    worker `worker[g]`; `index` and `present` are per judgment (the ACU's index in its
    reference), `count[g]` the number of ACUs of the group's reference."""

    summary: np.ndarray
    worker: np.ndarray
    count: np.ndarray
    start: np.ndarray
    acu: np.ndarray
    index: np.ndarray
    present: np.ndarray


def label_groups(dataset, batch=None, rank=None, worker_rank=None) -> LabelGroups:
    """The counted judgments in groups of (summary, worker), ordered by `rank(summary ids)`
    then `worker_rank(worker ids)` (each a distinct non-negative integer per id; default the
    ids), and within a group by the ACU's index in its reference (ACU_ORDER), as every export
    lists a summary's ACUs."""
    rows = integer_rows(
        counted_judgments(dataset, batch)
        .values_list("assignment__hit__summary_id", "assignment__worker_id", "acu_id", "present", "pk")
        .order_by(),
        5,
    )
    # a worker who judged a pair in several rounds: their latest judgment, as the scores read it
    rows = rows[latest_per_worker(rows[:, 0], rows[:, 2], rows[:, 1], rows[:, 4])]
    summary, worker, acu, present, _ = rows.T
    places = acu_places(dataset)
    index, count, _ = places.of(acu)
    first = rank(summary) if rank is not None else summary
    second = worker_rank(worker) if worker_rank else worker
    order = _order(first, second, index, int(count.max()) if count.size else 0)
    summary, worker = summary[order], worker[order]
    if summary.size:
        changed = (summary[1:] != summary[:-1]) | (worker[1:] != worker[:-1])
        start = np.concatenate(([0], np.flatnonzero(changed) + 1, [summary.size]))
    else:
        start = np.zeros(1, dtype=np.intp)
    heads = start[:-1]
    return LabelGroups(
        summary[heads],
        worker[heads],
        count[order][heads],
        start,
        acu[order],
        index[order],
        present[order],
    )


def _order(first: np.ndarray, second: np.ndarray, third: np.ndarray, third_size: int) -> np.ndarray:
    """The order by (first, second, third), all non-negative: one stable sort of a combined
    key (40x faster than np.lexsort of the three on nearly sorted judgments) when it fits."""
    if first.size == 0:
        return np.zeros(0, dtype=np.intp)
    second_size = int(second.max()) + 1
    if (int(first.max()) + 1) * second_size * third_size < 2**62:
        return np.argsort((first * second_size + second) * third_size + third, kind="stable")
    return np.lexsort((third, second, first))


def label_matrix(groups: LabelGroups) -> np.ndarray:
    """One row per group, one column per ACU index: 1/0, or -1 where the worker gave no label
    (and past the reference's ACUs). A worker has one label per ACU (`label_groups` keeps the
    latest of a worker who judged a summary in several rounds)."""
    width = int(groups.count.max()) if len(groups.count) else 0
    matrix = np.full((len(groups.summary), width), -1, dtype=np.int8)
    matrix[np.repeat(np.arange(len(groups.summary)), np.diff(groups.start)), groups.index] = groups.present
    return matrix


def label_texts(matrix: np.ndarray, widths: np.ndarray) -> list[str]:
    """The JSON of each row's first `widths[i]` labels, -1 as null ("[1, 0, null]", as
    json.dumps writes it). Rows repeat (a few hundred distinct ones among 66,000 at RoSE
    scale), so each distinct one is written once."""
    if len(matrix) == 0:
        return []
    keyed = np.ascontiguousarray(np.column_stack([widths, matrix]), dtype=np.int16)
    rows = keyed.view(np.dtype((np.void, 2 * keyed.shape[1]))).ravel().tolist()  # each row as bytes
    texts: dict[bytes, str] = {}
    for row in set(rows):
        values = np.frombuffer(row, dtype=np.int16).tolist()
        texts[row] = json.dumps([None if v < 0 else v for v in values[1 : 1 + values[0]]])
    return [texts[row] for row in rows]


def majorities(
    groups: LabelGroups, matrix: np.ndarray
) -> tuple[list[int], np.ndarray, np.ndarray, list[float], np.ndarray]:
    """Per summary (in group order): its id, its majority labels (a row; present when more
    than half of the votes say present: a tie, and an ACU nobody judged, is not;
    scoring.stats.aggregation.majority_present), its number of ACUs, its ACU score (the mean
    of the majority), and the start of its groups (the last item is the number of groups)."""
    starts = _runs(groups.summary)
    if len(groups.summary) == 0:
        return [], matrix[:0], groups.count[:0], [], starts
    heads = starts[:-1]
    present = np.add.reduceat((matrix == 1).astype(np.int32), heads, axis=0)
    total = np.add.reduceat((matrix >= 0).astype(np.int32), heads, axis=0)
    majority = (2 * present > total).astype(np.int8)
    count = groups.count[heads]
    scores = (majority.sum(axis=1) / count).tolist()
    return groups.summary[heads].tolist(), majority, count, scores, starts
