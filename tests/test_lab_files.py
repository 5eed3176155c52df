"""Files a lab really uploads: a metric sheet saved by Excel (semicolons and decimal commas, tabs,
empty trailing columns, Windows-1252 bytes, a workbook), our own scores.csv read back, a zipped
pyramid folder on the RoSE form, an indented JSON file or JSON Lines on the wrong format, an
archive of two pyramid folders. Each imports as meant or is refused naming what it is, storing
nothing."""

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Dataset
from config.csv_cells import FORMULA_START, original_text
from hits.services.dataset_import import import_dataset
from scoring.models import MetricScore
from scoring.runs.services import compute_scores

from .conftest import DEMO_ROSE
from .crowd_data import demo_dataset

# The upload is parsed by a task (scoring.runs.metric_uploads): in process, in the request, here.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def upload_metrics(client, dataset, name: str, data: bytes) -> str:
    url = reverse("dashboard_metrics_upload", args=[dataset.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, data)}, follow=True).content.decode()


def test_a_metric_sheet_saved_by_excel_imports_its_numbers(client, lead):
    """Refused before with 'the first line must be the header': Excel's CSV in a region with a
    decimal comma (semicolons), its "Unicode text" read as tabs, and trailing empty columns."""
    dataset = demo_dataset()
    client.force_login(lead)
    pairs = [(d.external_id, s.name) for d in dataset.documents.order_by("position") for s in dataset.systems.all()]
    saved = {
        "semicolons.csv": "Example_ID;System;Metric;Score\r\n" + "".join(f"{d};{s};m1;-0,25\r\n" for d, s in pairs),
        "tabs.tsv": "example_id\tsystem\tmetric\tscore\n" + "".join(f"{d}\t{s}\tm2;x\t-0.25\n" for d, s in pairs),
        "columns.csv": "example_id,system,metric,score,,\n" + "".join(f"{d},{s},m3,-0.25,,\n" for d, s in pairs),
    }
    for name, text in saved.items():
        page = upload_metrics(client, dataset, name, text.encode())
        assert f"Imported {len(pairs)} scores of" in page, name
    values = set(MetricScore.objects.filter(dataset=dataset).values_list("metric", "value"))
    assert values == {("m1", -0.25), ("m2;x", -0.25), ("m3", -0.25)}


def test_a_workbook_or_a_windows_1252_sheet_is_refused_saying_what_it_is(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    document, system = dataset.documents.first().external_id, dataset.systems.first().name
    text = f"example_id,system,metric,score\n{document},{system},bleu,0.5\n{document},{system},précision,0.5\n"
    page = upload_metrics(client, dataset, "scores.csv", text.encode("cp1252"))
    assert "scores.csv, line 3: bytes that are not UTF-8" in page and "save the file as UTF-8" in page
    page = upload_metrics(client, dataset, "scores.xlsx", b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 64)
    assert "scores.xlsx: the file is a zip archive (a zipped folder, or an .xlsx or .ods workbook)" in page
    assert "save the sheet as “CSV UTF-8” (.csv)" in page
    assert not MetricScore.objects.filter(dataset=dataset).exists()


def test_ids_our_scores_csv_protected_from_spreadsheets_are_read_back_as_the_ids(client, lead, tmp_path):
    """A document id -42 is written '-42 in scores.csv (no formula in Excel); a metric sheet made
    from that file's columns was refused with unknown example_id "'-42"."""
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0]) | {"example_id": "-42"}
    path = tmp_path / "ids.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    import_dataset(path, name="ids", fmt="rose")
    dataset = Dataset.objects.get(name="ids")
    compute_scores(dataset, None, n_resamples=20, trigger="test")
    client.force_login(lead)
    scores = client.get(reverse("dashboard_export", args=[dataset.pk, "scores.csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(scores)))
    assert "'-42" in {row["example_id"] for row in rows} and float(rows[0]["acu"]) >= 0
    sheet = "example_id,system,metric,score\n" + "".join(f"{r['example_id']},{r['system']},len,-1\n" for r in rows)
    page = upload_metrics(client, dataset, "from-scores.csv", sheet.encode())
    assert f"Imported {len(rows)} scores of len." in page
    assert MetricScore.objects.filter(dataset=dataset, document__external_id="-42", value=-1.0).exists()


def import_page(client, fmt: str, name: str, data: bytes) -> str:
    form = {"name": "lab", "format": fmt, "file": SimpleUploadedFile(name, data)}
    response = client.post(reverse("dataset_import"), form)
    assert response.status_code == 400
    return response.content.decode()


def test_a_file_on_the_wrong_format_is_named_for_what_it_is(client, lead, realsumm_path):
    client.force_login(lead)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for folder in ("realsumm", "realsumm copy"):
            for part in ("ids.txt", "documents.txt"):
                zf.write(realsumm_path / part, f"{folder}/{part}")
    page = import_page(client, "rose", "realsumm.zip", archive.getvalue())
    assert "realsumm.zip: the file is a zip archive" in page and "imports as “Pyramid folder”" in page
    page = import_page(client, "pyramid", "realsumm.zip", archive.getvalue())
    assert "realsumm.zip: the archive holds 2 pyramid folders (realsumm/, realsumm copy/)" in page

    record = json.loads(DEMO_ROSE.read_text(encoding="utf-8").splitlines()[0])
    page = import_page(client, "rose", "record.json", json.dumps(record, indent=2).encode())
    assert (
        "record.json, line 1: the line holds only a bracket" in page and "looks like one indented JSON document" in page
    )
    page = import_page(client, "rose-protocols", "demo.jsonl", DEMO_ROSE.read_bytes())
    assert (
        "demo.jsonl, line 2: not valid JSON at column 1: more text follows" in page and "looks like JSON Lines" in page
    )
    assert not Dataset.objects.exists()


def test_a_corrupt_zip_on_the_rose_form_is_named_a_zip_archive_not_undecodable_text(client, lead):
    """A damaged .zip (its first bytes not a zip's) left on "RoSE JSONL" read "junk.zip, line 1:
    bytes that are not UTF-8 at byte 0 ...; save the file as UTF-8"."""
    client.force_login(lead)
    junk = b"\xe2\xe1k\xa0" + bytes(range(256)) * 4
    page = import_page(client, "rose", "junk.zip", junk)
    assert "junk.zip: the file is a zip archive" in page and "not a text file" in page
    assert "imports as “Pyramid folder”" in page and "not UTF-8" not in page
    page = import_page(client, "pyramid", "junk.zip", junk)  # where it is read as an archive
    assert "junk.zip: not a .zip or .tar(.gz) archive of a pyramid folder" in page
    page = import_page(client, "rose", "notes.jsonl", junk)  # a text file's name: as before
    assert "notes.jsonl, line 1: bytes that are not UTF-8 at byte 0" in page
    assert not Dataset.objects.exists()


def documented_columns(what: str) -> str:
    """The header docs/scoring.md gives for a download (`judgments.csv` `worker,...`)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "scoring.md").read_text(encoding="utf-8")
    return re.search(rf"`{re.escape(what)}` `([^`]+)`", text).group(1)


def test_a_semicolon_in_a_name_starts_no_formula_cell_where_excel_splits_at_semicolons(client, lead, tmp_path):
    """OWASP: a separator inside the text starts a new cell. Excel with a decimal comma splits a
    CSV at semicolons, and a system name `bart;=cmd|...;` put a formula in a cell of its own."""
    hostile = "bart;=cmd|' /C calc'!A0;"
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        old = sorted(record["system_outputs"])[0]
        record["system_outputs"][hostile] = record["system_outputs"].pop(old)
        record["annotations"][hostile] = record["annotations"].pop(old)
    path = tmp_path / "semicolon.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    import_dataset(path, name="semicolon", fmt="rose")
    dataset = Dataset.objects.get(name="semicolon")
    compute_scores(dataset, None, n_resamples=20, trigger="test")
    client.force_login(lead)
    for what in ("judgments.csv", "scores.csv"):
        response = client.get(reverse("dashboard_export", args=[dataset.pk, what]))
        text = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
        for separator in (";", ","):  # a region with a decimal comma, and one with a decimal point
            for row in csv.reader(io.StringIO(text), delimiter=separator):
                assert not any(cell.startswith(FORMULA_START) for cell in row), (what, separator, row)
        rows = list(csv.reader(io.StringIO(text)))
        assert ",".join(rows[0]) == documented_columns(what)
        assert hostile in {original_text(cell) for row in rows for cell in row}
        numbers = [row[-1] for row in rows[1:]]
        assert numbers and all(cell.replace(".", "").replace("e-", "").isdigit() for cell in numbers), what


def test_a_file_too_large_sent_from_a_page_is_refused_on_a_page_naming_the_command_for_it(client, lead, settings):
    """A browser got the middleware's JSON (`{"ok": false, ...}` on a blank screen), and every
    page named import_dataset, also the metric and rating uploads. The API keeps its JSON."""
    settings.IMPORT_UPLOAD_MAX_BYTES = 5000
    client.force_login(lead)
    pages = {
        reverse("dataset_import"): "import_dataset",
        reverse("dashboard_metrics_upload", args=[1]): "import_metric_scores",
        reverse("protocols_import", args=[1]): "import_ratings",
    }
    for url, command in pages.items():
        upload = SimpleUploadedFile("big.jsonl", b"x" * 9000)
        response = client.post(url, {"name": "big", "file": upload}, HTTP_ACCEPT="text/html,application/xhtml+xml")
        assert response.status_code == 413 and response["Content-Type"].startswith("text/html"), url
        page = response.content.decode()
        assert "the limit here is 4.9" in page and f"Use the {command} command for larger files." in page, url
    upload = SimpleUploadedFile("big.jsonl", b"x" * 9000)
    api = client.post(reverse("api_dataset_import"), {"name": "big", "file": upload}, HTTP_ACCEPT="text/html")
    assert api.status_code == 413 and api.json()["code"] == "too_large"
    assert not Dataset.objects.exists()


def test_a_dataset_file_on_the_metric_form_is_named_as_one(client, lead):
    """It said "'source' must map systems to scores" (the first key of a RoSE record that is not a metric)."""
    dataset = demo_dataset()
    client.force_login(lead)
    page = upload_metrics(client, dataset, "realsumm.jsonl", DEMO_ROSE.read_bytes())
    assert "realsumm.jsonl, line 1: this is a line of a RoSE dataset file" in page
    assert not MetricScore.objects.filter(dataset=dataset).exists()
