"""A JSON Lines file that does not parse is refused in plain words, the same for every JSON-lines
importer (RoSE datasets, metric scores): a cut-off file is said to be cut off, a CSV file on the
JSONL form is said not to be JSONL, and where a line breaks is said without the parser's jargon."""

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset
from scoring.models import MetricScore
from scoring.runs.metrics import import_metric_bytes

from .conftest import DEMO_ROSE

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def demo_lines(count: int = 6) -> list[str]:
    return DEMO_ROSE.read_text(encoding="utf-8").splitlines()[:count]


def import_page(client, name: str, data: bytes, fmt="rose") -> str:
    upload = SimpleUploadedFile(name, data)
    response = client.post(reverse("dataset_import"), {"name": "x", "format": fmt, "file": upload})
    assert response.status_code == 400
    return html.unescape(response.content.decode())


def test_a_file_cut_off_in_a_string_says_so(client, lead):
    lines = demo_lines()
    lines[-1] = lines[-1][:150]  # the download stopped inside the sixth document's source text
    opened = lines[-1].index('"', lines[-1].index('"source":') + len('"source":')) + 1  # its column, from 1
    client.force_login(lead)
    page = import_page(client, "truncated.jsonl", ("\n".join(lines) + "\n").encode())
    assert (
        f"Nothing was imported. truncated.jsonl, line 6: the line is not complete JSON (a string opened at column "
        f"{opened} never closes): the file may be cut off" in page
    )
    assert "Unterminated" not in page and "starting at" not in page
    assert not Dataset.objects.exists()


def test_a_line_cut_short_inside_the_file_is_not_called_the_end_of_the_file(tmp_path):
    lines = demo_lines()
    lines[2] = lines[2][:-5]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError) as info:
        call_command("import_dataset", str(path), "--name", "x")
    assert str(info.value) == (
        "Nothing was imported. broken.jsonl, line 3: the line is not complete JSON (it ends inside an object or a"
        " list): the line may be cut short, or broken over two lines"
    )


def test_a_csv_file_on_the_jsonl_form_is_said_not_to_be_jsonl(client, lead):
    client.force_login(lead)
    page = import_page(client, "data.jsonl", b"example_id,source,reference\n1,a text,a reference\n")
    assert (
        "data.jsonl, line 1: the line is not JSON: this does not look like a RoSE JSONL file (it looks like CSV:"
        " its first line has commas and no braces)" in page
    )
    assert "Expecting value" not in page


def test_a_later_line_that_is_no_json_names_its_start_not_the_files_kind(tmp_path):
    lines = demo_lines(3)
    lines[1] = "oops, a note"
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(
        CommandError, match=r"notes\.jsonl, line 2: the line is not JSON \(it starts with 'oops, a note'\)$"
    ):
        call_command("import_dataset", str(path), "--name", "x")


def test_metric_scores_jsonl_say_the_same(realsumm):
    document = realsumm.documents.order_by("position").first().external_id
    system = realsumm.systems.order_by("name").first().name
    good = json.dumps({"example_id": document, "m": {system: 0.5}})
    cut = good[:-3]
    with pytest.raises(Exception) as info:
        import_metric_bytes(realsumm, f"{good}\n{cut}\n".encode(), "scores.jsonl")
    assert str(info.value) == (
        "scores.jsonl, line 2: the line is not complete JSON (it ends inside an object or a list): the file may be cut off"
    )
    with pytest.raises(Exception) as info:
        import_metric_bytes(realsumm, b"example_id,system,metric\n", "scores.jsonl")
    assert str(info.value) == (
        "scores.jsonl, line 1: the line is not JSON: this does not look like a metric scores JSONL file (it looks like"
        " CSV: its first line has commas and no braces)"
    )
    assert not MetricScore.objects.exists()


def test_a_protocol_file_cut_off_says_so(tmp_path):
    path = tmp_path / "cut.json"
    text = json.dumps([{"example_id": "1", "source": "s.", "reference": "r.", "system_outputs": {"a": "x."}}])
    path.write_text(text[:40])
    with pytest.raises(Exception) as info:
        import_dataset(path, name="x", fmt="rose-protocols")
    assert (
        str(info.value)
        == "cut.json, line 1: the file is not complete JSON (a string opened at column 38 never closes): it may be cut off"
    )


def parse_error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    return info.value


@pytest.mark.parametrize(
    "line, words",
    [
        ('{"a": 1 "b": 2}', "the line is not valid JSON at column 9: a comma or a closing bracket is missing"),
        ('{"a" 1}', "the line is not valid JSON at column 6: a colon is missing after a key"),
        ("{'a': 1}", "the line is not valid JSON at column 2: a key is not in double quotes"),
        ('{"a": 1,}', "a comma stands before a closing brace"),
        ('{"a": True}', "the line is not valid JSON at column 7: a value is missing or is not JSON"),
        ('{"a": 1} {"b": 2}', "the line is not valid JSON at column 10: more text follows the end of the JSON value"),
        ('{"a": "x\ty"}', "a string holds a raw tab or line break"),
        ('{"a": 12', "the line is not complete JSON (it ends inside an object or a list)"),
        ('{"a": 0.', "the line is not complete JSON (it ends inside an object or a list)"),
        ('{"a": [tr', "the line is not complete JSON (it ends inside an object or a list)"),
        ('{"a": tru}', "the line is not valid JSON at column 7: a value is missing or is not JSON"),
        ("[", "the line holds only a bracket: JSONL holds one JSON object per line"),
        ("<html><body>", "this does not look like a RoSE JSONL file (it looks like HTML or XML"),
        ("a\tb\tc", "(it looks like a tab-separated table: its first line has tabs and no braces)"),
    ],
)
def test_each_parser_complaint_in_plain_words(line, words):
    from annotation.importing.jsonlines import line_problem  # here: the other tests run on code without it

    problem = line_problem(parse_error(line), line, first=True, last=False, kind="RoSE JSONL")
    assert words in problem
    assert "Expecting" not in problem and "delimiter" not in problem
