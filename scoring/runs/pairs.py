"""Scores of a round whose allocation follows the crowd's answers (`adaptive`, HIT-level, and
`pairs`, by ACU, issue 43): each judged pair's label is its posterior
(hits.allocation.service.pair_labels: the workers' gold-anchored estimates over the pair's prior,
the judge run's calibrated probability when a `pairs` batch has one), the label the allocation
settled on, not the majority of its one to a few answers (a 1-1 split of a reliable and a shaky
worker is the reliable one's answer, where the majority's tie is not present). A `fixed` round's
labels stay the majority (RoSE). The labels enter as one vote per pair from a pseudo worker
(id -2); the alphas and the workers table keep reading the human judgments."""

import numpy as np

from hits.allocation.policy import ADAPTIVE_KINDS
from hits.allocation.service import pair_labels
from scoring.runs.data import Judgments

POSTERIOR_WORKER = -2


def posterior_labelled(batch) -> bool:
    """Whether the round's labels are its pairs' posteriors (module docstring): a round of an adaptive
    or `pairs` batch, whose refits estimate its workers; not the dataset's scores across rounds."""
    return batch is not None and batch.allocation in ADAPTIVE_KINDS


def with_posterior_labels(batch, judgments: Judgments) -> Judgments:
    """One vote per pair the counted `judgments` judged: its posterior label."""
    rows = list(
        zip(
            judgments.summary.tolist(),
            judgments.acu.tolist(),
            judgments.worker.tolist(),
            judgments.present.tolist(),
            strict=True,
        )
    )
    labels = pair_labels(batch, rows) if rows else {}
    keys = sorted(labels)
    n = len(keys)
    return Judgments(
        np.array([k[0] for k in keys], dtype=np.int64),
        np.array([k[1] for k in keys], dtype=np.int64),
        np.full(n, POSTERIOR_WORKER, dtype=np.int64),
        np.array([labels[k] for k in keys], dtype=bool),
        np.zeros(n, dtype=bool),
    )
