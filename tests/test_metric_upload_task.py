"""Issue 45 item 8: a metric file is parsed by a task with its progress, not in the request. The page
stores the file and hands the task to the one dispatch (a Celery worker here, as with a broker; a
thread of the embedded server; in the request when neither runs in the background); the page shows
how far the task has read; a bad file is still refused with its line and stores nothing."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from scoring import tasks
from scoring.models import MetricScore, MetricUpload
from scoring.runs.metrics import PROGRESS_EVERY, import_metric_bytes

from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


def _lines(dataset, count: int) -> str:
    documents = list(dataset.documents.order_by("position").values_list("external_id", flat=True))
    system = dataset.systems.order_by("name").first().name
    return "\n".join(
        json.dumps({"example_id": documents[i % len(documents)], f"m{i}": {system: i / count}}) for i in range(count)
    )


def _post(client, dataset, name: str, text: str):
    url = reverse("dashboard_metrics_upload", args=[dataset.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, text.encode())}, follow=True).content.decode()


def test_the_reader_reports_its_progress_every_so_many_lines():
    dataset = demo_dataset()
    seen: list[int] = []
    result = import_metric_bytes(dataset, _lines(dataset, 2 * PROGRESS_EVERY + 5).encode(), "m.jsonl", seen.append)
    assert seen == [PROGRESS_EVERY, 2 * PROGRESS_EVERY] and result["scores"] == 2 * PROGRESS_EVERY + 5


def test_an_example_id_with_spaces_is_read_as_the_dataset_import_reads_it():
    """A JSONL file whose example_id is padded (" 17 ") was refused as unknown, while the dataset's own
    import trims ids (and the CSV reader trims every cell)."""
    dataset = demo_dataset()
    document = dataset.documents.order_by("position").first()
    system = dataset.systems.order_by("name").first().name
    line = json.dumps({"example_id": f"  {document.external_id} ", "padded": {system: 0.5}})
    assert import_metric_bytes(dataset, line.encode(), "padded.jsonl")["scores"] == 1
    assert MetricScore.objects.get(dataset=dataset).document_id == document.pk


def test_the_request_only_stores_the_file_and_the_task_reads_it_with_progress(client, lead):
    """With a broker (the suite's default) the request queues the task and answers at once."""
    dataset = demo_dataset()
    client.force_login(lead)
    count = PROGRESS_EVERY + 10
    page = _post(client, dataset, "big.jsonl", _lines(dataset, count))
    assert "Importing big.jsonl in the background" in page
    upload = MetricUpload.objects.get()
    assert upload.status == MetricUpload.Status.QUEUED and upload.lines == count and not MetricScore.objects.exists()
    assert f"line 0 of {count}" in page and "<progress" in page and 'data-refresh="3"' in page

    assert tasks.import_metric_upload(upload.pk).startswith(f"Imported {count} scores")  # as the worker runs it
    upload.refresh_from_db()
    assert (upload.status, upload.lines_read, bytes(upload.data)) == (MetricUpload.Status.DONE, count, b"")
    assert MetricScore.objects.filter(dataset=dataset).count() == count
    page = client.get(reverse("dashboard_metrics", args=[dataset.pk])).content.decode()
    assert "Last upload, big.jsonl" in page and f"Imported {count} scores" in page and "<progress" not in page
    assert "data-refresh" not in page
    assert tasks.import_metric_upload(upload.pk) == "This upload was imported already."  # a redelivered task


def test_a_bad_file_read_by_the_task_stores_nothing_and_the_page_says_which_line(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    text = _lines(dataset, 3) + "\n" + '{"example_id": "nope", "m": {"x": 1}}'
    _post(client, dataset, "bad.jsonl", text)
    message = tasks.import_metric_upload(MetricUpload.objects.get().pk)
    assert message == "Nothing was imported. bad.jsonl, line 4: unknown example_id 'nope'"
    assert not MetricScore.objects.exists()
    page = client.get(reverse("dashboard_metrics", args=[dataset.pk])).content.decode()
    assert 'class="notice error" id="metric-upload-state"' in page and "line 4: unknown example_id" in page


def test_in_the_request_without_background_threads_the_answer_is_at_once(client, lead, eager_celery):
    dataset = demo_dataset()
    client.force_login(lead)
    page = _post(client, dataset, "small.jsonl", _lines(dataset, 4))
    assert "Imported 4 scores of m0, m1, m2, m3." in page
    assert MetricUpload.objects.get().status == MetricUpload.Status.DONE


def test_an_embedded_servers_lost_import_reads_stopped(client, lead, eager_celery, settings):
    """A thread of the embedded server that is gone (a restart) leaves the upload queued: the page
    says so instead of refreshing for ever."""
    settings.LONG_TASKS_IN_BACKGROUND = True
    dataset = demo_dataset()
    MetricUpload.objects.create(dataset=dataset, name="left.jsonl", data=b"{}", size=2, lines=1)
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[dataset.pk])).content.decode()
    assert "The import of left.jsonl stopped when the server restarted" in page and "data-refresh" not in page
