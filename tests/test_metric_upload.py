"""Issue 27 item 4: metric scores on a page (JSONL or CSV upload, format and example shown) and
ROUGE computed with one click."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Summary
from scoring.models import MetricScore

from .crowd_data import demo_dataset

# The upload is parsed by a task (scoring.runs.metric_uploads): in process, in the request, here.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def upload(client, dataset, name, text):
    return client.post(
        reverse("dashboard_metrics_upload", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, text.encode())},
        follow=True,
    ).content.decode()


def test_the_page_documents_the_formats_with_this_datasets_names(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[dataset.pk])).content.decode()
    document = dataset.documents.order_by("position").first().external_id
    system = dataset.systems.order_by("name").first().name
    assert "No automatic metric scores yet." in page and 'id="metrics-upload"' in page
    assert f"{document},{system},my_metric,0.42" in page and "example_id,system,metric,score" in page
    assert "python manage.py" not in page.replace(".venv/bin/python manage.py", "")


def test_jsonl_and_csv_uploads_store_scores_and_a_bad_line_stores_nothing(client, lead):
    dataset = demo_dataset()
    documents = list(dataset.documents.order_by("position").values_list("external_id", flat=True))
    systems = list(dataset.systems.order_by("name").values_list("name", flat=True))
    client.force_login(lead)
    lines = [json.dumps({"example_id": d, "bertscore": {s: i / 10 for i, s in enumerate(systems)}}) for d in documents]
    page = upload(client, dataset, "scores.jsonl", "\n".join(lines))
    assert f"Imported {len(documents) * len(systems)} scores of bertscore." in page
    assert MetricScore.objects.filter(dataset=dataset, metric="bertscore").count() == len(documents) * len(systems)

    rows = ["example_id,system,metric,score"] + [f"{d},{s},bleu,0.5" for d in documents for s in systems]
    page = upload(client, dataset, "scores.csv", "\n".join(rows))
    assert "Imported 40 scores of bleu." in page
    assert "Stored: bertscore, bleu." in page or "Stored: bleu, bertscore." in page

    bad = rows[:3] + [f"{documents[0]},{systems[0]},bleu,high"]
    page = upload(client, dataset, "scores.csv", "\n".join(bad))
    assert "Nothing was imported. scores.csv, line 4: score of" in page and "is not a number" in page
    assert MetricScore.objects.filter(dataset=dataset, metric="bleu").count() == 40  # the earlier ones kept
    page = upload(client, dataset, "scores.csv", "doc,sys,metric,value\n")
    assert "the first line must be the header example_id,system,metric,score" in page


def test_rouge_with_one_click_matches_the_rouge_score_package(client, lead, eager_celery):
    from rouge_score import rouge_scorer

    dataset = demo_dataset()
    client.force_login(lead)
    page = client.post(reverse("dashboard_metrics_rouge", args=[dataset.pk]), follow=True).content.decode()
    n = Summary.objects.filter(document__dataset=dataset).count()
    assert f"ROUGE computed for {n} summaries" in page
    names = {"rouge1_recall", "rouge1_f1", "rouge2_recall", "rouge2_f1", "rougeL_recall", "rougeL_f1"}
    assert set(MetricScore.objects.filter(dataset=dataset).values_list("metric", flat=True)) == names
    assert MetricScore.objects.filter(dataset=dataset).count() == 6 * n
    summary = Summary.objects.filter(document__dataset=dataset).select_related("document__reference").first()
    expected = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True).score(
        summary.document.reference.text, summary.text
    )["rouge2"]
    stored = MetricScore.objects.get(document=summary.document, system=summary.system, metric="rouge2_recall")
    assert stored.value == pytest.approx(expected.recall) and 0 < stored.value < 1
    # Again: replaced, not doubled.
    client.post(reverse("dashboard_metrics_rouge", args=[dataset.pk]))
    assert MetricScore.objects.filter(dataset=dataset).count() == 6 * n


def _first(dataset):
    return (
        dataset.documents.order_by("position").first().external_id,
        dataset.systems.order_by("name").first().name,
    )


def _line(document, metric, score_json: str) -> str:
    return f'{{"example_id": {json.dumps(document)}, {json.dumps(metric)}: {{"SYSTEM": {score_json}}}}}'


@pytest.mark.parametrize(
    "make_line, message",
    [
        (lambda d, s: "[" * 50_000 + "]" * 50_000, "line 2: the JSON is nested more than 32 levels deep"),
        (lambda d, s: f'{{"example_id": {json.dumps(d)}, "m": {"[" * 40 + "]" * 40}}}', "nested more than 32"),
        (lambda d, s: _line(d, "m", "1" * 400).replace("SYSTEM", s), "integer of 400 digits (at most 30)"),
        (lambda d, s: _line(d, "m", "9" * 5000).replace("SYSTEM", s), "integer of 5000 digits (at most 30)"),
        (lambda d, s: _line(d, "bad\u0000name", "0.5").replace("SYSTEM", s), "has a control character"),
        (lambda d, s: _line(d, "bad\x07bell", "0.5").replace("SYSTEM", s), "has a control character"),
        (lambda d, s: _line(d, "x", "0.5").replace("SYSTEM", s).replace('"x"', '"\\ud800"'), "control character"),
        (lambda d, s: _line(d, "m", "1e999").replace("SYSTEM", s), "is not a number"),
    ],
)
def test_hostile_metric_lines_are_refused_with_their_line_and_store_nothing(client, lead, make_line, message):
    """Issue 45 item 8: every line through the one bounded JSON reader; never a server error."""
    dataset = demo_dataset()
    document, system = _first(dataset)
    client.force_login(lead)
    good = _line(document, "m", "0.5").replace("SYSTEM", system)
    page = upload(client, dataset, "scores.jsonl", good + "\n" + make_line(document, system) + "\n" + good)
    assert "Nothing was imported. scores.jsonl, line 2: " in page and message in page
    assert not MetricScore.objects.filter(dataset=dataset).exists()


@pytest.mark.parametrize("cell", ["bad\x00name", "bad\x1bname"])
def test_a_csv_metric_name_with_a_control_character_is_refused(client, lead, cell):
    dataset = demo_dataset()
    document, system = _first(dataset)
    client.force_login(lead)
    text = f"example_id,system,metric,score\n{document},{system},ok,0.5\n{document},{system},{cell},0.5\n"
    page = upload(client, dataset, "scores.csv", text)
    assert "Nothing was imported. scores.csv, line 3: " in page and "has a control character" in page
    assert not MetricScore.objects.filter(dataset=dataset).exists()
