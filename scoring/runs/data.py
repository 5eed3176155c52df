"""Reading what scoring needs out of the database as numpy arrays.

On PostgreSQL the judgments stream out with COPY (`bench/recompute_bench.py` compares it
with the ORM's rows) and both reads go through `scoring.runs.scoped` (plans that do not depend on
the statistics); other databases go through the ORM.
"""

import io
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Count

from annotation.models import ACU, Summary
from hits.models import Worker
from hits.selectors import counted_judgments
from scoring.runs import round_cache, scoped


@dataclass
class Judgments:
    summary: np.ndarray
    acu: np.ndarray
    worker: np.ndarray
    present: np.ndarray
    excluded: np.ndarray  # the worker is excluded from scoring (kept for the workers table)
    ids: np.ndarray | None = None  # the judgments' ids, when read from the database

    def __len__(self):
        return len(self.summary)

    def subset(self, keep: np.ndarray) -> "Judgments":
        ids = None if self.ids is None else self.ids[keep]
        return Judgments(
            self.summary[keep], self.acu[keep], self.worker[keep], self.present[keep], self.excluded[keep], ids
        )


def _copy_ints(sql: str, params: list) -> np.ndarray:
    """A query's integer columns through COPY, flattened."""
    with connection.cursor() as cursor:
        query = cursor.mogrify(sql, params).decode()
        buffer = io.StringIO()
        cursor.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT csv)", buffer)
    text = buffer.getvalue().replace("\n", ",")
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)


EMPTY_ROWS = np.zeros((0, 5), dtype=np.int64)


def _rows_by_round(dataset_id: int, batch_ids: list[int]) -> dict[int, np.ndarray]:
    """{round: (judgment id, summary, ACU, worker, present) rows by judgment id} of those rounds."""
    rows = _copy_ints(*scoped.judgments_query(dataset_id, batch_ids=batch_ids)).reshape(-1, 6)
    rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
    bounds = np.flatnonzero(np.diff(rows[:, 0])) + 1
    return {int(part[0, 0]): np.ascontiguousarray(part[:, 1:]) for part in np.split(rows, bounds) if len(part)}


def dataset_judgment_rows(dataset_id: int) -> np.ndarray:
    """Every counted judgment of the dataset as (id, summary, ACU, worker, present) rows, by
    round and judgment id; the rounds unchanged since this process last read them from
    `scoring.runs.round_cache`."""
    parts = round_cache.per_round(
        "judgments", dataset_id, lambda batch_ids: _rows_by_round(dataset_id, batch_ids), EMPTY_ROWS
    )
    return np.concatenate(parts) if parts else EMPTY_ROWS


def load_judgments(dataset, batch=None, include_excluded: bool = False) -> Judgments:
    batch_id = batch.pk if batch else None
    if scoped.available() and batch_id is None:
        flat = dataset_judgment_rows(dataset.pk)
    elif scoped.available():
        flat = _copy_ints(*scoped.judgments_query(dataset.pk, batch_id))
    else:
        qs = counted_judgments(dataset, batch, include_excluded=True).values_list(
            "pk", "assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present"
        )
        flat = np.array([v for row in qs.order_by().iterator(chunk_size=20000) for v in row], dtype=np.int64)
    rows = flat.reshape(-1, 5)
    worker = rows[:, 3].copy()
    excluded_ids = Worker.objects.filter(pk__in=np.unique(worker).tolist(), excluded=True).values_list("pk", flat=True)
    excluded = np.isin(worker, list(excluded_ids))
    judgments = Judgments(
        rows[:, 1].copy(), rows[:, 2].copy(), worker, rows[:, 4].astype(bool), excluded, rows[:, 0].copy()
    )
    return judgments if include_excluded else judgments.subset(~excluded)


@dataclass
class SummaryTable:
    """Every summary of the dataset, indexed by position; `index(ids)` maps ids to positions."""

    ids: np.ndarray
    system: np.ndarray  # system id
    document: np.ndarray  # document id
    words: np.ndarray
    reference_words: np.ndarray
    acu_count: np.ndarray  # ACUs of the summary's reference
    system_names: dict
    document_external: dict
    document_position: dict

    def index(self, summary_ids) -> np.ndarray:
        return np.searchsorted(self.ids, summary_ids)


def load_summaries(dataset) -> SummaryTable:
    if scoped.available():
        rows = scoped.summary_rows(dataset.pk)
    else:
        acu_counts = dict(
            ACU.objects.filter(reference__document__dataset=dataset)
            .values_list("reference_id")
            .annotate(n=Count("pk"))
            .order_by()
        )
        rows = [
            r[:5] + (acu_counts.get(r[5], 0),)
            for r in Summary.objects.filter(document__dataset=dataset)
            .values_list(
                "pk",
                "system_id",
                "document_id",
                "word_count",
                "document__reference__word_count",
                "document__reference__pk",
            )
            .order_by("pk")
        ]
    arr = np.array(rows, dtype=np.int64).reshape(-1, 6)
    return SummaryTable(
        ids=arr[:, 0],
        system=arr[:, 1],
        document=arr[:, 2],
        words=arr[:, 3],
        reference_words=arr[:, 4],
        acu_count=arr[:, 5],
        system_names=dict(dataset.systems.values_list("pk", "name")),
        document_external=dict(dataset.documents.values_list("pk", "external_id")),
        document_position=dict(dataset.documents.values_list("pk", "position")),
    )
