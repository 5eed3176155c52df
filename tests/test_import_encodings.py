"""Files saved as "UTF-8 with BOM" (Excel, Notepad) import as the same dataset as without the
mark; a UTF-16 file is refused with a message that says so."""

import codecs
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE
from .snapshots import dataset_snapshot

pytestmark = pytest.mark.portable


def _with_bom(path):
    path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())


@pytest.mark.django_db
def test_a_pyramid_folder_saved_with_byte_order_marks_imports_the_same_dataset(tmp_path, realsumm_path):
    folder = tmp_path / "realsumm"
    shutil.copytree(realsumm_path, folder)
    for path in [*folder.glob("*.txt"), *folder.glob("summaries/*"), *folder.glob("labels/*")]:
        _with_bom(path)
    import_dataset(realsumm_path, name="plain")
    import_dataset(folder, name="marked")  # the BOM of a label file made its first label "\ufeff1"

    marked = Dataset.objects.get(name="marked")
    # The first document id was "\ufeffcnndm1017": a metric file's "cnndm1017" did not match it.
    assert marked.documents.get(position=0).external_id == "cnndm1017"
    assert dataset_snapshot(marked) == dataset_snapshot(Dataset.objects.get(name="plain"))


@pytest.mark.django_db
def test_a_rose_file_saved_with_a_byte_order_mark_imports(tmp_path):
    path = tmp_path / "marked.jsonl"
    shutil.copy(DEMO_ROSE, path)
    _with_bom(path)
    import_dataset(DEMO_ROSE, name="plain", fmt="rose")
    import_dataset(path, name="marked", fmt="rose")  # was "invalid JSON: Unexpected UTF-8 BOM"
    assert dataset_snapshot(Dataset.objects.get(name="marked")) == dataset_snapshot(Dataset.objects.get(name="plain"))


@pytest.mark.django_db
def test_a_utf16_file_is_refused_saying_so(tmp_path):
    path = tmp_path / "utf16.jsonl"
    path.write_bytes(DEMO_ROSE.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(CommandError, match=r"utf16\.jsonl, line 1: the file is UTF-16 text; save it as UTF-8"):
        call_command("import_dataset", str(path), "--name", "utf16", "--format", "rose")
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_bytes_that_are_not_utf8_after_a_byte_order_mark_are_named_at_their_place(tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = DEMO_ROSE.read_bytes().split(b"\n")
    lines[2] = lines[2][:20] + b"\xff" + lines[2][20:]
    path.write_bytes(codecs.BOM_UTF8 + b"\n".join(lines))
    offset = 3 + len(lines[0]) + len(lines[1]) + 2 + 20
    with pytest.raises(CommandError, match=rf"bad\.jsonl, line 3: bytes that are not UTF-8 at byte {offset} "):
        call_command("import_dataset", str(path), "--name", "bad", "--format", "rose")


@pytest.mark.django_db
@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\x0c", "\x1e"])
def test_a_rose_reference_is_cut_into_sentences_at_its_line_breaks_only(tmp_path, separator):
    """str.splitlines also cut a sentence at U+0085 (a cp1252 ellipsis read as Latin-1, common in
    news text), U+2028, a form feed or a record separator: one sentence became two."""
    record = json.loads(DEMO_ROSE.read_text(encoding="utf-8").splitlines()[0])
    record["reference"] = f"The fund grew{separator} then it shrank .\r\nThe second sentence ."
    path = tmp_path / "lines.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    import_dataset(path, name="lines", fmt="rose")
    document = Dataset.objects.get(name="lines").documents.get()
    texts = list(document.reference.sentences.values_list("text", flat=True))
    assert texts == ["The fund grew then it shrank .", "The second sentence ."]
