"""The workers table keeps a rejected and blocked worker with the evidence of the decision (issue 47, item 9)."""

import pytest
from django.urls import reverse

from hits.models import Assignment, Worker
from hits.services import review
from scoring.runs.selectors import run_part
from scoring.runs.services import compute_scores

from .crowd_data import simulated_round

pytestmark = pytest.mark.django_db


def test_a_worker_whose_work_was_all_rejected_and_who_was_blocked_stays_in_the_table(client, lead):
    dataset, batch = simulated_round()
    spammer = Worker.objects.filter(assignments__hit__batch=batch, external_id__icontains="spam").distinct().get()
    ids = list(Assignment.objects.filter(worker=spammer, hit__batch=batch).values_list("pk", flat=True))
    review.bulk(review.reject, ids, feedback="Answers at random.", by=None)
    review.block_worker(worker_id=spammer.pk, reason="Random answers", by=None)

    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    rows = {r["worker"]: r for r in run_part(run, "workers")["rows"]}
    row = rows[spammer.external_id]
    assert row["rejected"] == len(ids) and row["assignments"] == 0 and row["blocked"]
    assert row["agreement"] is not None and row["agreement"] < 0.8  # a random answerer against the majority
    others = [r for name, r in rows.items() if name != spammer.external_id]
    assert others and all(r["rejected"] == 0 for r in others)

    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert spammer.external_id in page and f"{len(ids)} rejected" in page and "blocked" in page
