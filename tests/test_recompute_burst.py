"""A burst of submissions leads to a handful of recomputes, run by a real Celery worker
through the real Redis broker, and the last one equals a fresh full recompute."""
import time

import pytest
from django.db import connection
from celery.contrib.testing.worker import start_worker

from hits.services.dataset_import import import_dataset
from annotation.models import Dataset
from config.celery import app
from hits.services import handout
from hits.services.batches import create_batch, publish_batch
from hits.models import Judgment
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker
from scoring.models import ScoringRun
from scoring.services import compute_scores

from .crowd_data import all_answers

pytestmark = pytest.mark.django_db(transaction=True)


def test_200_submissions_coalesce_into_a_few_recomputes(realsumm_path, settings, make_user):
    settings.SCORING_RECOMPUTE_DELAY = 2
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    dataset = Dataset.objects.get(name="realsumm")
    batch = publish_batch(create_batch(dataset=dataset, assignments=1, systems=list(dataset.systems.all()[:2])))
    worker = inhouse_worker(make_user("burst-worker", "worker"))
    app.control.purge()  # tasks queued by earlier tests (no worker was running then)

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        for i in range(200):
            a = handout.next_assignment(worker, batch)
            submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a, present=i % 3 == 0))
        last_id = Judgment.objects.filter(assignment__hit__batch=batch).order_by("-pk").values_list("pk", flat=True).first()
        deadline = time.time() + 90
        while time.time() < deadline:
            final = ScoringRun.objects.filter(dataset=dataset, trigger="submissions", status="done").first()
            if final and final.inputs["last_judgment_id"] == last_id:
                break
            time.sleep(0.5)
        else:
            pytest.fail("no recompute saw the last submission")
        time.sleep(3)  # a recompute still queued would show up now
    # The worker thread's own database connection outlives it; end it so the test
    # database can be dropped at the end of the session.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    runs = ScoringRun.objects.filter(dataset=dataset, trigger="submissions")
    print(f"200 submissions -> {runs.count()} recomputes")
    assert 1 <= runs.count() <= 5, f"{runs.count()} recomputes for 200 submissions"
    final = runs.first()
    assert final.inputs["last_judgment_id"] == last_id and final.inputs["judgments"] > 26400
    fresh = compute_scores(dataset, seed=0)
    assert final.outputs["systems"] == fresh.outputs["systems"]
    assert final.outputs["alpha"] == fresh.outputs["alpha"]
    assert final.outputs["counts"] == fresh.outputs["counts"]

