"""Every streamed download (the ledger CSVs, the dataset's RoSE JSONL, the judgments CSV, the API's
RoSE JSONL) is built by one helper (`config.downloads.streamed_download`): the same content type,
the same RFC 6266 file name (percent-encoded for a name outside ASCII) and the exporter's content."""

import re
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Dataset
from hits.selectors import ledger_export
from hits.services.dataset_import import import_dataset
from scoring.results.exports.rose import rose_lines
from scoring.results.exports.tables import iter_judgments_csv

from .conftest import DEMO_ROSE
from .test_ledger_csv import paid_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

NAME = "résumé ✓ 数据"
QUOTED = "r%C3%A9sum%C3%A9%20%E2%9C%93%20%E6%95%B0%E6%8D%AE"  # NAME in a filename*=utf-8'' value
CSV = "text/csv; charset=utf-8"
NDJSON = "application/x-ndjson; charset=utf-8"


def body(response) -> str:
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_each_streamed_download_keeps_its_type_name_and_content(client, lead, worker):
    paid = paid_batch(worker, lead)  # ledger rows to download
    import_dataset(DEMO_ROSE, name=NAME, fmt="rose")
    dataset = Dataset.objects.get(name=NAME)
    batch = dataset.batches.get()  # the imported label round
    client.force_login(lead)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    downloads = [  # (response, content type, Content-Disposition, content)
        (
            client.get(reverse("batch_ledger_csv", args=[paid.pk])),
            CSV,
            f'attachment; filename="ledger-batch-{paid.pk}.csv"',
            "".join(ledger_export.batch_ledger_csv(paid)),
        ),
        (
            client.get(reverse("ledger_csv_all")),
            CSV,
            'attachment; filename="ledger-all-batches.csv"',
            "".join(ledger_export.all_ledgers_csv()),
        ),
        (
            client.get(reverse("dataset_export", args=[dataset.pk])),
            NDJSON,
            f"attachment; filename*=utf-8''{QUOTED}.rose.jsonl",
            "".join(rose_lines(dataset)),
        ),
        (
            client.get(reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]) + f"?round={batch.pk}"),
            CSV,
            f"attachment; filename*=utf-8''{QUOTED}-round{batch.pk}-judgments.csv",
            "".join(iter_judgments_csv(dataset, batch)),
        ),
        (
            api.get(f"/api/datasets/{dataset.pk}/exports/rose.jsonl"),
            NDJSON,
            f"attachment; filename*=utf-8''{QUOTED}.rose.jsonl",
            "".join(rose_lines(dataset)),
        ),
        (
            api.get(f"/api/datasets/{dataset.pk}/exports/rose.jsonl?round={batch.pk}"),
            NDJSON,
            f"attachment; filename*=utf-8''{QUOTED}-round{batch.pk}.rose.jsonl",
            "".join(rose_lines(dataset, batch)),
        ),
    ]
    for response, content_type, disposition, content in downloads:
        assert response["Content-Type"] == content_type, disposition
        assert response["Content-Disposition"] == disposition
        text = body(response)
        assert text == content and text.count("\n") > 1, disposition  # a header and rows, or one record a line


def test_no_view_builds_a_streamed_response_by_hand():
    """A new download goes through config.downloads too, so its headers cannot drift from these."""
    root = Path(__file__).resolve().parent.parent
    by_hand = [
        str(path.relative_to(root))
        for app in ("config", "annotation", "hits", "scoring")
        for path in (root / app).rglob("*.py")
        if re.search(r"\bStreamingHttpResponse\(", path.read_text()) and path != root / "config" / "downloads.py"
    ]
    assert by_hand == []
