"""Upload forms say what the server takes from them (data-max-bytes, data-larger-command, for
static/js/upload_limit.js): the request size middleware's own limit for their view."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from .crowd_data import demo_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def _form_limits(page: str, form_id: str) -> tuple[int, str]:
    tag = re.search(rf'<form [^>]*id="{form_id}"[^>]*>', page)
    assert tag, form_id
    limit = re.search(r'data-max-bytes="(\d+)"', tag.group(0))
    command = re.search(r'data-larger-command="([^"]*)"', tag.group(0))
    assert limit and command, tag.group(0)
    return int(limit.group(1)), command.group(1)


def test_each_import_form_carries_the_limit_its_view_has(client, lead, settings):
    settings.IMPORT_UPLOAD_MAX_BYTES = 123_456
    dataset = demo_dataset()
    client.force_login(lead)
    pages = {
        "dataset-import": (reverse("dataset_import"), "import_dataset"),
        "rating-import": (reverse("dashboard_protocols", args=[dataset.pk]), "import_ratings"),
        "metrics-upload": (reverse("dashboard_metrics", args=[dataset.pk]), "import_metric_scores"),
    }
    for form_id, (url, command) in pages.items():
        page = client.get(url).content.decode()
        assert _form_limits(page, form_id) == (123_456, command)
        assert "js/upload_limit.js" in page


def test_the_limit_a_form_shows_is_the_one_the_server_applies(client, lead, settings):
    client.force_login(lead)
    page = client.get(reverse("dataset_import")).content.decode()
    limit, _ = _form_limits(page, "dataset-import")
    settings.IMPORT_UPLOAD_MAX_BYTES = limit = 20_000  # the page reads the setting each time
    assert _form_limits(client.get(reverse("dataset_import")).content.decode(), "dataset-import")[0] == limit
    over = SimpleUploadedFile("big.jsonl", b"x" * (limit + 1))
    response = client.post(reverse("dataset_import"), {"name": "big", "format": "rose", "file": over})
    assert response.status_code == 413 and "the limit here is 19.5\xa0KB" in response.json()["error"]


def test_the_panel_participant_list_form_carries_its_limit(client, lead, settings):
    """The panel's participant-ids upload (not an import: REQUEST_MAX_BYTES, no command) says its
    limit as the import forms do, and the server refuses one byte over it."""
    from hits.models import Batch

    from .test_panel import open_panel

    settings.REQUEST_MAX_BYTES = 20_000
    batch = open_panel()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert _form_limits(page, "panel-ids-form") == (20_000, "") and "js/upload_limit.js" in page
    url = reverse("panel_participants", args=[batch.pk])
    over = SimpleUploadedFile("ids.txt", b"P1\n" * (20_001 // 3 + 1))
    response = client.post(url, {"ids": "", "file": over})
    assert response.status_code == 413 and "the limit here is 19.5\xa0KB" in response.json()["error"]
    fits = SimpleUploadedFile("ids.txt", b"P1\nP2\n")
    assert client.post(url, {"ids": "", "file": fits}).status_code == 302
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["P1", "P2"]


def test_the_metrics_form_carries_the_metric_files_own_bound(client, lead, settings):
    """The metric upload reads its file into memory and takes at most METRIC_UPLOAD_MAX_BYTES
    (50 MiB), below the import limit (1 GiB): the form says that bound, and the server refuses
    a larger request by its length in the same words, naming the command for larger files."""
    from scoring.results.views.dashboards import METRIC_UPLOAD_MAX_BYTES

    settings.IMPORT_UPLOAD_MAX_BYTES = 1024**3
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[dataset.pk])).content.decode()
    assert _form_limits(page, "metrics-upload") == (50 * 1024 * 1024, "import_metric_scores")
    assert METRIC_UPLOAD_MAX_BYTES == 50 * 1024 * 1024
    imports = client.get(reverse("dataset_import")).content.decode()
    assert _form_limits(imports, "dataset-import") == (1024**3, "import_dataset")  # the others keep theirs
    url = reverse("dashboard_metrics_upload", args=[dataset.pk])
    response = client.generic(  # a 60 MB file: refused from its length, before a byte is read
        "POST", url, b"x", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH=str(60 * 1024 * 1024)
    )
    assert response.status_code == 413
    assert response.json()["error"] == (
        "The request is 60.0\xa0MB; the limit here is 50.0\xa0MB. Nothing was received or stored. "
        "Use the import_metric_scores command for larger files."
    )
    # A file under the bound is taken (parsed by the task), as before.
    fits = SimpleUploadedFile("scores.jsonl", b'{"summary_id": "x", "metric": "m", "score": 1}\n')
    assert client.post(url, {"file": fits}).status_code == 302


def _longest_ids(count: int) -> list[str]:
    """`count` distinct participant ids of the longest form allowed (PARTICIPANT_ID: 64 characters)."""
    return [f"{n:05d}".ljust(64, "x") for n in range(count)]


def test_the_panel_ids_form_carries_the_views_own_file_bound(client, lead):
    """The view refuses a list file over LIST_FILE_MAX_BYTES (10,000 ids) whatever REQUEST_MAX_BYTES
    (2 MiB) lets through; the form carried only the 2 MiB, so a 1 MB file was sent and then refused.
    The form now carries the view's bound, and the server takes a file of exactly that size and
    refuses one byte more, in the words the browser uses."""
    from hits.models import Batch
    from hits.providers.panel import admission

    from .test_panel import open_panel

    batch = open_panel()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    tag = re.search(r'<form [^>]*id="panel-ids-form"[^>]*>', page).group(0)
    assert 'data-max-file-bytes="800000"' in tag and 'data-file-holds="10,000 ids"' in tag
    assert admission.LIST_FILE_MAX_BYTES == 800_000 and admission.MAX_LISTED == 10_000
    url = reverse("panel_participants", args=[batch.pk])
    ids = _longest_ids(admission.MAX_LISTED)
    exact = "".join(pid.ljust(78) + "\r\n" for pid in ids).encode()  # 80 bytes a line: the bound
    assert len(exact) == admission.LIST_FILE_MAX_BYTES
    over = client.post(url, {"ids": "", "file": SimpleUploadedFile("ids.txt", exact + b"\n")}, follow=True)
    assert (
        "The list was not stored: The file is 781.3\xa0KB; the limit here is 781.2\xa0KB (10,000 ids). "
        "Choose a smaller file."
    ) in over.content.decode().replace("&nbsp;", "\xa0")
    assert not Batch.objects.get(pk=batch.pk).provider_config.get("allowed_ids")
    assert client.post(url, {"ids": "", "file": SimpleUploadedFile("ids.txt", exact)}).status_code == 302
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ids


def test_ten_thousand_of_the_longest_ids_fit_the_list_files_bound():
    """The bound is made for 10,000 ids: the longest form (64 characters), each quoted, with CRLFs,
    under a CSV header and after a UTF-8 BOM, is 680,019 bytes, within 800,000."""
    from hits.providers.panel import admission

    ids = _longest_ids(admission.MAX_LISTED)
    export = ("\ufeffParticipant id\r\n" + "".join(f'"{pid}"\r\n' for pid in ids)).encode()
    assert len(export) <= admission.LIST_FILE_MAX_BYTES
    upload = SimpleUploadedFile("export.csv", export)
    assert admission.parse_ids(admission.read_upload(upload)) == ids
