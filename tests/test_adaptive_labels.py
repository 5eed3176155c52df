"""An adaptive round's labels are its pairs' posteriors, as a `pairs` round's (scoring/runs/pairs.py): the
HIT-level rule settles on posteriors, often at 2 or 4 answers, where the majority calls a 1-1 or 2-2 split
not present whoever said what (bench/RESULTS.md, `--labels`). A fixed round keeps the majority (RoSE)."""

import json
from io import StringIO

import pytest

from hits.models import WorkerEstimate
from scoring.results.exports.rose import export_rose
from scoring.runs.services import summary_scores_arrays

from .crowd_data import demo_dataset
from .test_allocation import adaptive_batch, no_refit, work  # noqa: F401 - the fixture: the estimates stay as set
from .test_allocation_pairs_app import one_hit_each
from .test_handout import make_workers


def acu_labels(dataset, round_) -> list[int]:
    """The round's RoSE export's `acu_labels` of its one summary."""
    out = StringIO()
    export_rose(dataset, out, batch=round_)
    rows = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    labels = [a["acu_labels"] for row in rows for a in row["annotations"].values() if isinstance(a, dict)]
    assert len(labels) == 1
    return labels[0]


@pytest.mark.django_db
@pytest.mark.portable
def test_an_adaptive_rounds_split_is_labelled_by_its_posterior_not_by_the_majoritys_tie(no_refit):  # noqa: F811
    dataset = demo_dataset()
    batch = adaptive_batch(dataset, hits=1, allocation_min=2, allocation_max=2)
    reliable, shaky = make_workers(2)
    work(reliable, batch, True)  # every ACU present; the first ACU split 1 to 1
    work(shaky, batch, False)
    # the refit's estimates (anchored to gold): a reliable worker and one barely above chance; prior 0.5
    WorkerEstimate.objects.create(batch=batch, worker=reliable, sensitivity=0.95, specificity=0.95, gold_judged=40)
    WorkerEstimate.objects.create(batch=batch, worker=shaky, sensitivity=0.6, specificity=0.6, gold_judged=40)
    hit = batch.hits.get()
    assert (hit.max_assignments, hit.open_places) == (2, 0)
    n = hit.acu_count
    # the split pair: odds 19 (0.95 / 0.05, "present") times 2/3 (0.4 / 0.6, "absent") = 12.7, P = 0.93: present
    table, _, pos, scores, _ = summary_scores_arrays(dataset, batch)
    assert table.ids[pos].tolist() == [hit.summary_id]
    assert scores.tolist() == pytest.approx([1.0])
    assert acu_labels(dataset, batch) == [1] * n
    # the same answers in a fixed round: the majority's tie, not present
    fixed = one_hit_each(batch, "fixed")
    _, _, _, majority, _ = summary_scores_arrays(dataset, fixed)
    assert majority.tolist() == pytest.approx([(n - 1) / n])
    assert sum(acu_labels(dataset, fixed)) == n - 1
    # before any refit (no estimates: every worker 80% accurate, the batch prior 0.5) the posterior is the
    # majority's: the tie is 0.5, not present
    WorkerEstimate.objects.filter(batch=batch).delete()
    _, _, _, before_fit, _ = summary_scores_arrays(dataset, batch)
    assert before_fit.tolist() == pytest.approx([(n - 1) / n])
