"""The dataset's downloads agree with each other: the judgments CSV lists a summary's ACUs in their
index order (the order of the RoSE export's `reference_acus`), names each worker as the RoSE JSONL
export names them (a form an import keeps: export, import, export gives the same ids), and the
pages and the API give each download the same file name."""

import csv
import io
import json

import pytest
from django.urls import reverse
from django.utils.http import content_disposition_header
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import ACU, Dataset
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.results.exports.rose import rose_lines
from scoring.results.exports.tables import iter_judgments_csv
from scoring.runs.services import compute_scores

from .conftest import DEMO_ROSE
from .crowd_data import demo_dataset, published_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def csv_rows(dataset, batch=None) -> list[list[str]]:
    return list(csv.reader(io.StringIO("".join(iter_judgments_csv(dataset, batch)))))[1:]


def test_a_summarys_judgments_come_in_acu_index_order(client, lead):
    dataset = demo_dataset()
    # The demo holds references whose ACUs were not stored in their reference's order (an ACU of
    # the first sentence after one of the second): the order by ACU id is not the index order.
    by_id = ACU.objects.filter(reference__document__dataset=dataset).order_by("reference_id", "pk")
    by_index = ACU.objects.filter(reference__document__dataset=dataset).order_by(
        "reference_id", "sentence__position", "position", "pk"
    )
    assert list(by_id.values_list("pk", flat=True)) != list(by_index.values_list("pk", flat=True))
    client.force_login(lead)
    response = client.get(reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))[1:]
    groups: dict[tuple, list[int]] = {}
    for worker, example, system, index, _ in rows:
        groups.setdefault((worker, example, system), []).append(int(index))
    assert groups and all(indexes == list(range(len(indexes))) for indexes in groups.values())
    # ... the order of the RoSE export's reference_acus: the one expert's rows are its acu_labels.
    exported = {}
    for line in rose_lines(dataset):
        record = json.loads(line)
        for system, annotation in record["annotations"].items():
            exported[("expert", record["example_id"], system)] = annotation["acu_labels"]
    labels: dict[tuple, list[int]] = {}
    for worker, example, system, _, label in rows:
        labels.setdefault((worker, example, system), []).append(int(label))
    assert labels == exported


@pytest.fixture
def crowded():
    dataset = demo_dataset()
    simulate_crowd(published_batch(dataset), workers=3, accuracy=0.8, seed=2)
    return dataset


def test_the_csv_names_workers_as_the_rose_export_does(crowded):
    annotators = set()
    for line in rose_lines(crowded):
        for annotation in json.loads(line)["annotations"].values():
            annotators.update(annotation["annotator_labels"])
    workers = {row[0] for row in csv_rows(crowded)}
    assert workers == annotators
    assert "expert" in workers and sum(w.startswith("inhouse:") for w in workers) == 3


def test_export_import_export_keeps_the_worker_ids(crowded, tmp_path):
    path = tmp_path / "demo.rose.jsonl"
    path.write_text("".join(rose_lines(crowded)), encoding="utf-8")
    import_dataset(path, name="copy", fmt="rose")
    copy = Dataset.objects.get(name="copy")
    assert sorted(csv_rows(copy)) == sorted(csv_rows(crowded))
    assert "".join(rose_lines(copy)) == "".join(rose_lines(crowded))


def test_the_pages_and_the_api_name_each_download_alike(client, lead):
    import_dataset(DEMO_ROSE, name="realsumm-demo", fmt="rose")
    dataset = Dataset.objects.get(name="realsumm-demo")
    # the scores to export, computed here: the import's own recompute may run on a background
    # thread (the embedded default), not done by the time the export is asked for
    compute_scores(dataset, None)
    batch = dataset.batches.get()
    client.force_login(lead)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    pairs = [
        ("judgments.csv", "", "realsumm-demo-judgments.csv"),
        ("judgments.csv", f"?round={batch.pk}", f"realsumm-demo-round{batch.pk}-judgments.csv"),
        ("scores.csv", "", "realsumm-demo-scores.csv"),
    ]
    for what, query, name in pairs:
        page = client.get(reverse("dashboard_export", args=[dataset.pk, what]) + query)
        served = api.get(f"/api/datasets/{dataset.pk}/exports/{what}{query}", HTTP_ACCEPT="text/csv")
        assert page.status_code == served.status_code == 200, (what, query)
        assert page["Content-Disposition"] == served["Content-Disposition"] == content_disposition_header(True, name)
    page = client.get(reverse("dataset_export", args=[dataset.pk]))
    served = api.get(f"/api/datasets/{dataset.pk}/exports/rose.jsonl")
    assert page["Content-Disposition"] == served["Content-Disposition"]
    assert served["Content-Disposition"] == content_disposition_header(True, "realsumm-demo.rose.jsonl")
