"""RoSE export then import gives the same dataset."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.importing import DatasetImportError
from annotation.models import Dataset, Reference
from annotation.services import authoring
from hits.services.dataset_import import import_dataset
from scoring.results.exports.rose import export_rose

from .authoring_data import unauthored_dataset
from .conftest import DEMO_ROSE, REALSUMM_ROSE
from .snapshots import dataset_snapshot


def export_text(name: str) -> str:
    stream = io.StringIO()
    export_rose(Dataset.objects.get(name=name), stream)
    return stream.getvalue()


@pytest.mark.django_db
def test_rose_import_export_import_is_identity(tmp_path):
    import_dataset(REALSUMM_ROSE, name="first", fmt="rose")
    out = tmp_path / "first.jsonl"
    call_command("export_dataset", "first", "--format", "rose", "--output", str(out))
    import_dataset(out, name="second", fmt="rose")

    assert dataset_snapshot(Dataset.objects.get(name="first")) == dataset_snapshot(Dataset.objects.get(name="second"))
    # And the export of the re-import is byte for byte the same file.
    assert export_text("second") == out.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_export_carries_labels_and_scores(realsumm_path):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    records = [json.loads(line) for line in export_text("realsumm").splitlines()]
    original = [json.loads(line) for line in REALSUMM_ROSE.read_text().splitlines()]
    assert len(records) == 100
    first = records[0]
    assert first["example_id"] == "cnndm1017"
    bart = first["annotations"]["abs_bart_out"]
    assert len(bart["acu_labels"]) == len(first["reference_acus"]) == 10
    assert bart["acu"] == pytest.approx(sum(bart["acu_labels"]) / 10)
    assert 0 <= bart["normalized_acu"] <= bart["acu"]
    # Same labels as the original file, as a multiset per ACU text (export order is
    # sentence order, the file's is the writer's).
    for rec, orig in zip(records, original, strict=False):
        for system, annotation in orig["annotations"].items():
            exported = sorted(zip(rec["reference_acus"], rec["annotations"][system]["acu_labels"], strict=False))
            assert exported == sorted(zip(orig["reference_acus"], annotation["acu_labels"], strict=False))


@pytest.mark.django_db
def test_several_annotators_survive_the_roundtrip(tmp_path):
    record = json.loads(DEMO_ROSE.read_text().splitlines()[0])
    n = len(record["reference_acus"])
    system = next(iter(record["system_outputs"]))
    record["annotations"] = {
        system: {
            "annotator_labels": {
                "w1": [1] * n,
                "w2": [0] * n,
                "w3": [1, 0] + [None] * (n - 2),
            }
        }
    }
    src = tmp_path / "multi.jsonl"
    src.write_text(json.dumps(record) + "\n")
    import_dataset(src, name="multi", fmt="rose")
    exported = json.loads(export_text("multi"))
    annotation = exported["annotations"][system]
    assert set(annotation["annotator_labels"]) == {"w1", "w2", "w3"}
    # Majority with ties as not present: first ACU 2 of 3, second 1 of 3, the rest 1 of 2.
    assert annotation["acu_labels"] == [1, 0] + [0] * (n - 2)

    again = tmp_path / "again.jsonl"
    again.write_text(json.dumps(exported) + "\n")
    import_dataset(again, name="multi-again", fmt="rose")
    assert dataset_snapshot(Dataset.objects.get(name="multi")) == dataset_snapshot(
        Dataset.objects.get(name="multi-again")
    )


@pytest.mark.django_db
def test_export_carries_alpha_and_an_import_of_it_keeps_it(tmp_path):
    """Issue 47 item 4: alpha 5 became 2 after export and re-import (normalized scores changed)."""
    import_dataset(DEMO_ROSE, name="xsum-like", fmt="rose", alpha=5)
    buffer = io.StringIO()
    export_rose(Dataset.objects.get(name="xsum-like"), buffer)
    path = tmp_path / "again.jsonl"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    assert all(json.loads(line)["length_alpha"] == 5 for line in buffer.getvalue().splitlines())
    import_dataset(path, name="again", fmt="rose")
    assert Dataset.objects.get(name="again").length_alpha == 5
    buffer2 = io.StringIO()
    export_rose(Dataset.objects.get(name="again"), buffer2)
    assert buffer2.getvalue() == buffer.getvalue()  # normalized scores included
    import_dataset(path, name="told", fmt="rose", alpha=0.5)  # --alpha still wins
    assert Dataset.objects.get(name="told").length_alpha == 0.5

    lines = buffer.getvalue().splitlines()
    lines[1] = lines[1].replace('"length_alpha": 5', '"length_alpha": 2')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetImportError, match="line 2: 'length_alpha' differs"):
        import_dataset(path, name="mixed", fmt="rose")


@pytest.mark.django_db
def test_acus_an_author_wrote_come_back_under_the_sentence_they_were_written_under(tmp_path, author, make_user):
    """The export did not say which sentence an ACU belongs to, and the import put each under the
    sentence it shares most words with: "Anuradha Koirala was a CNN Hero.", written under the
    third sentence ("Seven other CNN Heroes ..."), came back under the first, and the ACU order of
    the copy's export changed with it."""
    dataset = unauthored_dataset(tmp_path, name="written", documents=1)
    reviewer = make_user("bea-author", "author")
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], reviewer_id=reviewer.pk)
    reference = Reference.objects.get(document__dataset=dataset)
    texts = [
        ["Anuradha Koirala has been sleeping outdoors."],
        ["Pushpa Basnet was forced to evacuate her residence."],
        ["Anuradha Koirala was a CNN Hero.", "Seven other CNN Heroes were assisting relief efforts."],
    ]
    sentences = [
        {"id": s.pk, "acus": [{"id": None, "text": t} for t in acus]}
        for s, acus in zip(reference.sentences.order_by("position"), texts, strict=True)
    ]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    authoring.approve(reference_id=reference.pk, user=reviewer)

    out = tmp_path / "written.jsonl"
    out.write_text(export_text("written"), encoding="utf-8")
    assert json.loads(out.read_text())["reference_acu_sentences"] == [0, 1, 2, 2]
    import_dataset(out, name="copy", fmt="rose")
    copy = Dataset.objects.get(name="copy")
    assert dataset_snapshot(copy) == dataset_snapshot(Dataset.objects.get(name="written"))
    assert export_text("copy") == out.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_a_sentence_index_that_is_not_one_of_the_reference_is_refused(tmp_path):
    record = json.loads(DEMO_ROSE.read_text().splitlines()[0])
    for bad in ([0] * (len(record["reference_acus"]) - 1), [3] * len(record["reference_acus"]), "0"):
        record["reference_acu_sentences"] = bad
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(record) + "\n")
        with pytest.raises(DatasetImportError, match=r"bad\.jsonl, line 1: 'reference_acu_sentences' must hold one"):
            import_dataset(path, name="bad", fmt="rose")
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_a_reference_of_one_sentence_comes_back_as_one_sentence(tmp_path):
    """A pyramid reference with one tagged sentence that the sentence splitter cuts in two was
    exported as one line without a line break, and its import split it: two sentences, and the
    ACU under the first."""
    folder = tmp_path / "one"
    (folder / "summaries").mkdir(parents=True)
    (folder / "ids.txt").write_text("d1\nd2\n")
    (folder / "documents.txt").write_text("Smith won the race and retired to Spain .\nJones lost .\n")
    (folder / "references.txt").write_text(
        "<t> Smith won the race . He then retired to Spain . </t>\n<t> Jones lost . </t> <t> He wept . </t>\n"
    )
    (folder / "SCUs.txt").write_text("Smith won the race.\tSmith retired to Spain.\nJones lost.\n")
    (folder / "summaries" / "sys.summary").write_text("Smith retired .\nJones wept .\n")
    import_dataset(folder, name="one", fmt="pyramid")
    out = tmp_path / "one.jsonl"
    out.write_text(export_text("one"), encoding="utf-8")
    import_dataset(out, name="again", fmt="rose")
    again = Dataset.objects.get(name="again")
    assert list(again.documents.get(external_id="d1").reference.sentences.values_list("text", flat=True)) == [
        "Smith won the race . He then retired to Spain ."
    ]
    assert dataset_snapshot(again) == dataset_snapshot(Dataset.objects.get(name="one"))


@pytest.mark.django_db
def test_acus_not_yet_proofread_come_back_as_drafts_not_approved(tmp_path, author):
    """An export taken while an author was still writing, imported again, made the unproofread ACUs
    approved ones (imported units are approved), ready for crowd batches."""
    dataset = unauthored_dataset(tmp_path, name="half-written", documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.order_by("position")]
    sentences[0]["acus"] = [{"id": None, "text": "Anuradha Koirala has been sleeping outdoors."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)

    out = tmp_path / "half.jsonl"
    out.write_text(export_text("half-written"), encoding="utf-8")
    assert [json.loads(line)["reference_approved"] for line in out.read_text().splitlines()] == [False, False]
    import_dataset(out, name="copy", fmt="rose")
    copy = Dataset.objects.get(name="copy")
    assert dataset_snapshot(copy) == dataset_snapshot(Dataset.objects.get(name="half-written"))
    assert not authoring.usable_for_crowd(copy).exists()
    # An author of the copy goes on writing it.
    authoring.assign_references(dataset=copy, author_ids=[author.pk], count=1)
    mine = Reference.objects.get(writer=author, document__dataset=copy)
    assert mine.acus.get().text == "Anuradha Koirala has been sleeping outdoors."
    authoring.submit_for_review(reference_id=mine.pk, user=author)


@pytest.mark.django_db
def test_reference_approved_must_be_true_or_false(tmp_path):
    record = json.loads(DEMO_ROSE.read_text().splitlines()[0])
    record["reference_approved"] = "no"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetImportError, match=r"bad\.jsonl, line 1: 'reference_approved' must be true or false"):
        import_dataset(path, name="bad", fmt="rose")
