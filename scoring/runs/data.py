"""Reading what scoring needs out of the database as numpy arrays.

On PostgreSQL both reads go through `scoring.runs.scoped` (plans that do not depend on the
statistics), the judgments streamed out with COPY; other databases go through the ORM. The two
give the same rows (tests/test_scoped_reads.py, both paths on PostgreSQL).
"""

import io
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Count

from annotation.models import ACU, Summary
from hits.latest_labels import latest_per_worker
from hits.models import Worker
from hits.selectors import counted_judgments, stopped_judgment_ids
from scoring.runs import scoped


@dataclass
class Judgments:
    summary: np.ndarray
    acu: np.ndarray
    worker: np.ndarray
    present: np.ndarray
    excluded: (
        np.ndarray
    )  # left out of scoring: the worker is excluded, or stopped in its batch (kept for the workers table)
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


def judgment_rows_orm(dataset, batch=None) -> np.ndarray:
    """The portable read of `load_judgments` (excluded workers included), flattened."""
    qs = counted_judgments(dataset, batch, include_excluded=True).values_list(
        "pk", "assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present"
    )
    return np.array([v for row in qs.order_by().iterator(chunk_size=20000) for v in row], dtype=np.int64)


def load_judgments(dataset, batch=None, include_excluded: bool = False) -> Judgments:
    """The counted judgments of the dataset (or one round) as arrays, one per worker and (summary,
    ACU): a worker who judged a pair in several rounds counts with their latest judgment (`_latest`).
    `include_excluded`: also those left out of scoring (an excluded worker's, a stop's), marked."""
    if scoped.available():
        flat = _copy_ints(*scoped.judgments_query(dataset.pk, batch.pk if batch else None))
    else:
        flat = judgment_rows_orm(dataset, batch)
    rows = flat.reshape(-1, 5)
    worker = rows[:, 3].copy()
    excluded_ids = Worker.objects.filter(pk__in=np.unique(worker).tolist(), excluded=True).values_list("pk", flat=True)
    excluded = np.isin(worker, list(excluded_ids)) | np.isin(rows[:, 0], stopped_judgment_ids(dataset, batch))
    judgments = Judgments(
        rows[:, 1].copy(), rows[:, 2].copy(), worker, rows[:, 4].astype(bool), excluded, rows[:, 0].copy()
    )
    judgments = judgments.subset(_latest(judgments))
    return judgments if include_excluded else judgments.subset(~judgments.excluded)


def _latest(judgments: Judgments) -> np.ndarray:
    """The rows that count when a worker judged a (summary, ACU) pair in more than one round (a
    scope pooling rounds: "All judgments"): their latest judgment, among those counted and, for the
    workers table, among those left out (`hits.latest_labels.latest_per_worker`)."""
    assert judgments.ids is not None  # read from the database
    keep = np.ones(len(judgments), dtype=bool)
    for part in (np.flatnonzero(~judgments.excluded), np.flatnonzero(judgments.excluded)):
        keep[part] = latest_per_worker(
            judgments.summary[part], judgments.acu[part], judgments.worker[part], judgments.ids[part]
        )
    return keep


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
    arr = np.array(_summary_rows(dataset), dtype=np.int64).reshape(-1, 6)
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


def _summary_rows(dataset) -> list[tuple]:
    """(summary, system, document, words, reference words, ACUs of the reference) of every
    summary of the dataset, by summary id."""
    acu_counts = dict(
        ACU.objects.filter(reference__document__dataset=dataset)
        .values_list("reference_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return [
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
