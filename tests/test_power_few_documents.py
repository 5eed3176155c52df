"""Issue 47, item 13 (the rest): with 5 documents, every system judged on each, the power section says
there are too few documents (not "Not every system was judged on every document" beside an empty chart),
and a bucket of one pair reads "Δ 0.213 (1 pair)", not "Δ 0.213–0.213 (1 pairs)"."""

import pytest
from django.urls import reverse

from hits.models import Assignment
from scoring.models import ScoringRun
from scoring.results.charts import power_bucket_label, power_curve
from scoring.runs import statistics
from scoring.runs.services import compute_scores

from .crowd_data import demo_dataset

SMALL_POWER = {"sizes": [10, 50], "n_trials": 20, "n_resamples": 200, "seed": 0}


@pytest.mark.django_db
def test_five_complete_documents_say_too_few_not_partial_coverage(client, lead):
    dataset = demo_dataset()
    Assignment.objects.filter(hit__summary__document__position__gte=5).delete()
    compute_scores(dataset, n_resamples=100)
    for runner in (statistics.run_power, statistics.plan_power):  # in process, and the split path
        run = statistics.start(dataset, ScoringRun.Kind.POWER, SMALL_POWER, trigger="test")
        runner(run.pk)
        run.refresh_from_db()
        assert run.status == ScoringRun.Status.DONE, run.error
        assert run.outputs["coverage"] == "complete" and run.outputs["pair_documents"] == [5] * 6
        assert len(run.outputs["no_power_pairs"]) == 6

    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk])).content.decode()
    assert 'id="power-shared"' not in page and "Not every system was judged" not in page
    assert 'id="power-too-few"' in page and "every system here was judged on 5" in page
    assert 'data-chart="power-chart"' not in page  # no empty chart


def test_a_bucket_of_one_pair_reads_as_one_difference():
    one = {"bucket": 0, "pairs": 1, "min_difference": 0.2131, "max_difference": 0.2134, "power": [0.5]}
    many = {"bucket": 1, "pairs": 3, "min_difference": 0.05, "max_difference": 0.12, "power": [0.9]}
    assert power_bucket_label(one, "ACU score") == "Δ ACU score 0.213 (1 pair)"
    assert power_bucket_label(many, "ACU score") == "Δ ACU score 0.050–0.120 (3 pairs)"
    chart = power_curve({"sizes": [10, 50], "buckets": [one, many]})  # a run stored before `score` was kept
    assert [d["label"] for d in chart["data"]["datasets"]][:2] == [
        "Δ ACU score 0.213 (1 pair)",
        "Δ ACU score 0.050–0.120 (3 pairs)",
    ]
