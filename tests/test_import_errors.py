"""Bad input stops an import with one message naming file, line and problem; nothing is written."""

import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation.importing import DatasetImportError
from annotation.models import ACU, Dataset, Document, ReferenceSentence, Summary, System
from hits.models import HIT, Assignment, Batch, Judgment, Worker
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE

pytestmark = pytest.mark.portable

MODELS = [Dataset, Document, ReferenceSentence, System, Summary, ACU, Batch, HIT, Assignment, Judgment, Worker]


def row_counts():
    return {m.__name__: m.objects.count() for m in MODELS}


@pytest.fixture
def pyramid_copy(tmp_path, realsumm_path):
    target = tmp_path / "realsumm"
    shutil.copytree(realsumm_path, target)
    return target


@pytest.fixture
def rose_lines():
    return DEMO_ROSE.read_text(encoding="utf-8").splitlines()


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def fails(path, fmt, *fragments, name="broken"):
    """Import via the management command; assert it fails naming every fragment and writes nothing."""
    before = row_counts()
    with pytest.raises(CommandError) as info:
        call_command("import_dataset", str(path), "--name", name, "--format", fmt)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert row_counts() == before
    return message


@pytest.mark.django_db
def test_shortened_label_line_names_file_and_line(pyramid_copy, realsumm_path):
    import_dataset(realsumm_path, name="realsumm")  # existing data must stay untouched
    label = pyramid_copy / "labels" / "abs_bart_out.label"
    lines = label.read_text().split("\n")
    lines[6] = "\t".join(lines[6].split("\t")[:-1])
    label.write_text("\n".join(lines))
    message = fails(pyramid_copy, "pyramid", "labels/abs_bart_out.label", "line 7", "labels")
    assert "units" in message


@pytest.mark.django_db
def test_files_with_different_line_counts(pyramid_copy):
    docs = pyramid_copy / "documents.txt"
    docs.write_text("\n".join(docs.read_text().split("\n")[:-3]))
    fails(pyramid_copy, "pyramid", "documents.txt", "97 lines", "100 documents")


@pytest.mark.django_db
def test_summary_file_with_a_missing_line(pyramid_copy):
    path = pyramid_copy / "summaries" / "ext_bart_out.summary"
    path.write_text("\n".join(path.read_text().split("\n")[:50]))
    fails(pyramid_copy, "pyramid", "summaries/ext_bart_out.summary", "50 lines")


@pytest.mark.django_db
def test_label_file_of_an_unknown_system(pyramid_copy):
    shutil.copy(pyramid_copy / "labels" / "abs_bart_out.label", pyramid_copy / "labels" / "mystery.label")
    fails(pyramid_copy, "pyramid", "labels/mystery.label", "unknown system 'mystery'")


@pytest.mark.django_db
def test_label_that_is_not_zero_or_one(pyramid_copy):
    label = pyramid_copy / "labels" / "abs_t5_out_base.label"
    lines = label.read_text().split("\n")
    lines[2] = lines[2].replace("0", "2", 1) if "0" in lines[2] else lines[2].replace("1", "2", 1)
    label.write_text("\n".join(lines))
    fails(pyramid_copy, "pyramid", "labels/abs_t5_out_base.label", "line 3", "not 0 or 1")


@pytest.mark.django_db
def test_empty_summary_text(pyramid_copy):
    path = pyramid_copy / "summaries" / "abs_bart_out.summary"
    lines = path.read_text().split("\n")
    lines[11] = "   "
    path.write_text("\n".join(lines))
    fails(pyramid_copy, "pyramid", "summaries/abs_bart_out.summary", "line 12", "empty summary")


@pytest.mark.django_db
def test_duplicate_document_ids(pyramid_copy):
    ids = pyramid_copy / "ids.txt"
    lines = ids.read_text().split("\n")
    lines[4] = lines[1]
    ids.write_text("\n".join(lines))
    fails(pyramid_copy, "pyramid", "ids.txt", "line 5", "duplicate id", "first on line 2")


@pytest.mark.django_db
def test_undecodable_bytes(pyramid_copy):
    path = pyramid_copy / "SCUs.txt"
    data = path.read_bytes().split(b"\n")
    data[8] = data[8][:10] + b"\xff\xfe" + data[8][10:]
    path.write_bytes(b"\n".join(data))
    fails(pyramid_copy, "pyramid", "SCUs.txt", "line 9", "not UTF-8")


@pytest.mark.django_db
def test_missing_file(pyramid_copy):
    (pyramid_copy / "SCUs.txt").unlink()
    fails(pyramid_copy, "pyramid", "SCUs.txt", "missing")


@pytest.mark.django_db
def test_invalid_json_line(tmp_path, rose_lines):
    rose_lines[3] = rose_lines[3][:-5]
    write_lines(tmp_path / "bad.jsonl", rose_lines)
    fails(tmp_path / "bad.jsonl", "rose", "bad.jsonl", "line 4", "the line is not complete JSON")


@pytest.mark.django_db
def test_rose_label_count_differs_from_acus(tmp_path, rose_lines):
    record = json.loads(rose_lines[2])
    system = next(iter(record["annotations"]))
    record["annotations"][system]["acu_labels"].append(1)
    rose_lines[2] = json.dumps(record)
    write_lines(tmp_path / "bad.jsonl", rose_lines)
    fails(tmp_path / "bad.jsonl", "rose", "line 3", system, "reference_acus has")


@pytest.mark.django_db
def test_rose_annotation_of_unknown_system(tmp_path, rose_lines):
    record = json.loads(rose_lines[0])
    record["annotations"]["ghost"] = {"acu_labels": [0] * len(record["reference_acus"])}
    rose_lines[0] = json.dumps(record)
    write_lines(tmp_path / "bad.jsonl", rose_lines)
    fails(tmp_path / "bad.jsonl", "rose", "line 1", "unknown system 'ghost'")


@pytest.mark.django_db
def test_rose_duplicate_example_id_and_empty_text(tmp_path, rose_lines):
    dup = list(rose_lines) + [rose_lines[0]]
    write_lines(tmp_path / "dup.jsonl", dup)
    fails(tmp_path / "dup.jsonl", "rose", "line 11", "duplicate example_id")

    record = json.loads(rose_lines[5])
    record["source"] = ""
    rose_lines[5] = json.dumps(record)
    write_lines(tmp_path / "empty.jsonl", rose_lines)
    fails(tmp_path / "empty.jsonl", "rose", "line 6", "'source' is empty")


@pytest.mark.django_db
def test_failure_late_in_the_write_rolls_everything_back(tmp_path, rose_lines, monkeypatch):
    """A database error after most rows are written still leaves nothing behind."""
    from hits.services import dataset_import as store

    write = store.insert_rows

    def explode(model, *args, **kwargs):
        if model is Judgment:  # every other table is written by then
            raise DatasetImportError("simulated failure while writing judgments")
        return write(model, *args, **kwargs)

    monkeypatch.setattr(store, "insert_rows", explode)
    write_lines(tmp_path / "ok.jsonl", rose_lines)
    fails(tmp_path / "ok.jsonl", "rose", "simulated failure")


@pytest.mark.django_db
def test_existing_name_needs_replace(tmp_path):
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    fails(DEMO_ROSE, "rose", "exists", "--replace", name="demo")
    call_command("import_dataset", str(DEMO_ROSE), "--name", "demo", "--format", "rose", "--replace")
    assert Dataset.objects.filter(name="demo").count() == 1
    assert Document.objects.filter(dataset__name="demo").count() == 10
    assert Batch.objects.filter(dataset__name="demo").count() == 1


@pytest.mark.django_db
def test_replace_refuses_to_destroy_crowd_work():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    Batch.objects.create(dataset=Dataset.objects.get(name="demo"), name="crowd round 1")
    before = row_counts()
    with pytest.raises(DatasetImportError, match="crowd batches"):
        import_dataset(DEMO_ROSE, name="demo", fmt="rose", replace=True)
    assert row_counts() == before


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_command_line_failure_exits_non_zero_without_a_traceback(tmp_path, rose_lines):
    import os
    import subprocess
    import sys
    from pathlib import Path

    rose_lines[1] = "{not json"
    write_lines(tmp_path / "bad.jsonl", rose_lines)
    project = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "manage.py", "import_dataset", str(tmp_path / "bad.jsonl"), "--name", "cli"],
        cwd=project,
        env=os.environ,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "bad.jsonl, line 2: the line is not valid JSON at column 2: a key is not in double quotes" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.django_db
def test_replace_refuses_to_destroy_acus_written_here(tmp_path, author):
    """--replace (or the Import page's Replace box) deleted every ACU the dataset's authors had
    written, with their history and the reviewers' comments, without a word."""
    from annotation.models import ACUChange, Reference
    from annotation.services import authoring

    from .authoring_data import unauthored_dataset

    dataset = unauthored_dataset(tmp_path, name="to-write", documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "Koirala sleeps outdoors."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    before = row_counts()
    with pytest.raises(CommandError, match=r"'to-write' has ACUs its authors wrote here \(1 reference\(s\)\)"):
        call_command("import_dataset", str(DEMO_ROSE), "--name", "to-write", "--format", "rose", "--replace")
    assert row_counts() == before and ACUChange.objects.count() == 1
    assert ACU.objects.get(reference=reference).text == "Koirala sleeps outdoors."


@pytest.mark.postgres_only("row locks: SQLite serializes writers instead")
@pytest.mark.django_db(transaction=True)
def test_two_imports_of_one_name_at_once_end_with_a_message_not_a_traceback():
    """A double-clicked Import, or two leads importing one name: the second import found no
    dataset of the name, then failed on the unique name with an IntegrityError (a traceback in the
    command, a 500 on the page and in the API)."""
    import threading

    from django.db import connection, transaction

    from .crowd_data import WAIT, waiting_on_a_lock

    inserted, committed = threading.Event(), threading.Event()

    def first_import():
        try:
            with transaction.atomic():
                Dataset.objects.create(name="twice", source_format="rose")
                inserted.set()
                # Held until the second import waits on the name, however long it takes to read
                # its file first (a fixed 10 s here let a busy machine's import come after the commit).
                waiting_on_a_lock(WAIT)
            committed.set()
        finally:
            connection.close()

    thread = threading.Thread(target=first_import)
    thread.start()
    assert inserted.wait(WAIT)
    try:
        with pytest.raises(CommandError, match="another import of a dataset named 'twice' finished"):
            call_command("import_dataset", str(DEMO_ROSE), "--name", "twice", "--format", "rose")
    finally:
        thread.join()
    assert committed.is_set()
    assert Dataset.objects.filter(name="twice").count() == 1 and not Document.objects.exists()
