"""The simulated crowd completes a REALSumm batch through the real services."""

import pytest
from django.core.management import call_command

from annotation.models import Dataset
from hits.models import Assignment, Judgment
from hits.services.batches import create_batch, publish_batch
from hits.services.dataset_import import import_dataset
from hits.services.qualification import build_test
from scoring.runs.summary_scores import system_scores

pytestmark = pytest.mark.django_db


def test_three_workers_at_090_complete_100_realsumm_summaries(realsumm_path, capsys):
    import_dataset(realsumm_path, name="realsumm")
    dataset = Dataset.objects.get(name="realsumm")
    test = build_test(dataset=dataset, name="q", items=4, pass_score=0.6, max_attempts=3, retry_after_hours=0)
    batch = publish_batch(
        create_batch(
            dataset=dataset, systems=list(dataset.systems.filter(name="abs_bart_out")), qualification_test=test
        )
    )
    call_command("simulate_crowd", str(batch.pk), "--workers", "3", "--accuracy", "0.9", "--seed", "7")
    assert "submitted 300 assignments" in capsys.readouterr().out
    assert Assignment.objects.filter(hit__batch=batch, status="submitted").count() == 300
    assert batch.hits.count() == 100
    assert Judgment.objects.filter(assignment__hit__batch=batch).count() == sum(
        h.acu_count * 3 for h in batch.hits.all()
    )
    crowd = system_scores(dataset, batch)[0]
    assert crowd.documents == 100
    # Three voters right 90% of the time: the majority is right about 97% of the time.
    assert abs(crowd.acu - 0.48349483849483854) < 0.05
