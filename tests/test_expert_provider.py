"""Issue 41: expert labels are stored as expert labels. The labels imported with a dataset and
those made in an expert round are a worker of provider `expert`; the workers page and the
workers table tell them from the crowd by that provider, never by a worker's name; the data
migration moves the old `imported` rows (workers, batches, stored runs' worker rows) to it."""

import importlib
import json

import pytest
from django.apps import apps
from django.urls import reverse

from annotation.models import Dataset
from hits.models import Batch, Worker
from hits.services import expert
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.models import ScoringRun, ScoringRunDetail
from scoring.results.dashboard import workers_table
from scoring.runs.services import compute_scores

from .conftest import DEMO_ROSE
from .crowd_data import demo_dataset, published_batch
from .test_expert_labels import label_all

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def partly_labelled(tmp_path, documents=3) -> Dataset:
    """Demo documents whose first one keeps its imported (expert) labels."""
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()[:documents]
    records = [json.loads(line) for line in lines]
    for record in records[1:]:
        record.pop("annotations", None)
    path = tmp_path / "partly.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_dataset(path, name="partly", fmt="rose")
    return Dataset.objects.get(name="partly")


def test_expert_round_and_imported_labels_are_expert_workers_by_provider(client, lead, author, tmp_path):
    dataset = partly_labelled(tmp_path)  # its labels are imported expert labels
    imported = Worker.objects.filter(assignments__hit__batch__dataset=dataset).distinct()
    assert imported.count() == 1 and imported.get().provider == Worker.Provider.EXPERT
    assert dataset.batches.get().provider == Worker.Provider.EXPERT

    round_ = expert.create_round(dataset, count=4, experts=1, seed=0)
    assert round_.provider == Worker.Provider.EXPERT
    assert label_all(round_, author)
    made_here = Worker.objects.filter(assignments__hit__batch=round_).distinct().get()
    assert made_here.provider == Worker.Provider.EXPERT and made_here.is_expert

    # A crowd worker whose name looks like an expert's ("<dataset>/<name>"), and an expert whose
    # name does not: only the provider says which is which.
    crowd_batch = published_batch(dataset, assignments=2)
    simulate_crowd(crowd_batch, workers=2, accuracy=0.9, seed=1, prefix="crowd")
    lookalike = Worker.objects.filter(assignments__hit__batch=crowd_batch).distinct().first()
    Worker.objects.filter(pk=lookalike.pk).update(external_id=f"{dataset.name}/lookalike")
    Worker.objects.filter(pk=made_here.pk).update(external_id="plain-name")

    run = compute_scores(dataset, None, trigger="test")
    rows = {r["worker"]: r for r in workers_table(run)["rows"]}
    assert rows["plain-name"]["provider"] == Worker.Provider.EXPERT and rows["plain-name"]["flags"] == []
    assert rows[f"{dataset.name}/lookalike"]["provider"] == Worker.Provider.INHOUSE

    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    notice = page.split('id="expert-labels"', 1)[1].split("</p>", 1)[0]
    assert "plain-name" in notice and "lookalike" not in notice
    table = page.split('id="expert-labels"', 1)[1].split("</p>", 1)[1]
    assert "lookalike" in table and "plain-name" not in table

    # The lead's actions refuse expert labels and serve the lookalike crowd worker.
    refused = client.post(
        reverse("dashboard_worker_action", args=[dataset.pk, made_here.pk, "exclude"]), follow=True
    ).content.decode()
    assert "These are expert labels, not a worker" in refused
    made_here.refresh_from_db()
    assert not made_here.excluded
    client.post(reverse("dashboard_worker_action", args=[dataset.pk, lookalike.pk, "exclude"]))
    lookalike.refresh_from_db()
    assert lookalike.excluded


def _migration(app: str, name: str):
    return importlib.import_module(f"{app}.migrations.{name}")


def test_the_migration_moves_imported_rows_to_the_expert_provider():
    """Workers, batches and stored runs' worker rows that said `imported` say `expert`; and back."""
    dataset = demo_dataset()
    annotators = list(Worker.objects.filter(assignments__hit__batch__dataset=dataset).distinct())
    worker = annotators[0]
    batch = dataset.batches.get()
    crowd = Worker.objects.create(provider=Worker.Provider.MTURK, external_id="A1")
    Worker.objects.filter(pk__in=[w.pk for w in annotators]).update(provider="imported")
    Batch.objects.filter(pk=batch.pk).update(provider="imported")
    run = ScoringRun.objects.create(dataset=dataset, status=ScoringRun.Status.DONE)
    ScoringRunDetail.objects.create(
        run=run,
        workers={
            "rows": [
                {"worker_id": worker.pk, "provider": "imported", "labels": 3},
                {"worker_id": crowd.pk, "provider": "mturk", "labels": 2},
            ],
            "flagged": 0,
        },
    )
    hits_0018 = _migration("hits", "0020_h41a_expert_provider")
    scoring_0010 = _migration("scoring", "0010_h41a_expert_provider_rows")

    hits_0018.expert_labels_as_expert(apps, None)
    scoring_0010.rows_say_expert(apps, None)
    worker.refresh_from_db()
    batch.refresh_from_db()
    crowd.refresh_from_db()
    assert (worker.provider, batch.provider, crowd.provider) == ("expert", "expert", "mturk")
    assert not Worker.objects.filter(provider="imported").exists()
    rows = ScoringRunDetail.objects.get(run=run).workers["rows"]
    assert [r["provider"] for r in rows] == ["expert", "mturk"] and rows[0]["labels"] == 3

    scoring_0010.rows_say_imported(apps, None)
    hits_0018.expert_labels_as_imported(apps, None)
    worker.refresh_from_db()
    assert worker.provider == "imported"
    assert [r["provider"] for r in ScoringRunDetail.objects.get(run=run).workers["rows"]] == ["imported", "mturk"]
