"""Importing the REALSumm sample in both formats: counts, order and the known score."""

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import ACU, Dataset, Document, Reference, Summary, System
from hits.models import Assignment, Batch, Judgment
from hits.services.dataset_import import import_dataset
from scoring.runs.summary_scores import system_scores

from .conftest import REALSUMM_ROSE
from .snapshots import dataset_snapshot

pytestmark = pytest.mark.portable

KNOWN_BART = 0.48349483849483854  # shared/data/realsumm/README.md


def label_file_scores(root) -> dict[str, float]:
    """Un-normalized score per system straight from the label files: mean over documents
    of present units / all units."""
    scores = {}
    for path in sorted((root / "labels").glob("*.label")):
        rows = [[int(x) for x in line.split("\t")] for line in path.read_text().strip("\n").split("\n")]
        scores[path.stem] = float(np.mean([sum(r) / len(r) for r in rows]))
    return scores


@pytest.mark.django_db
def test_pyramid_import_reports_and_stores_realsumm(realsumm_path, capsys):
    call_command("import_dataset", str(realsumm_path), "--name", "realsumm")
    out = capsys.readouterr().out
    assert "100 documents, 25 systems, 2500 summaries, 1056 ACUs" in out

    dataset = Dataset.objects.get(name="realsumm")
    assert Document.objects.filter(dataset=dataset).count() == 100
    assert System.objects.filter(dataset=dataset).count() == 25
    assert Summary.objects.filter(document__dataset=dataset).count() == 2500
    assert ACU.objects.filter(reference__document__dataset=dataset, status=ACU.Status.APPROVED).count() == 1056
    assert set(Reference.objects.filter(document__dataset=dataset).values_list("status", flat=True)) == {"approved"}
    # Labels: one read-only imported round, one annotator per summary.
    batch = Batch.objects.get(dataset=dataset)
    assert batch.read_only and batch.kind == Batch.Kind.IMPORTED
    assert Assignment.objects.filter(hit__batch=batch).count() == 2500
    assert Judgment.objects.filter(assignment__hit__batch=batch).count() == 26400


@pytest.mark.django_db
def test_imported_labels_reproduce_every_system_score(realsumm_path):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    expected = label_file_scores(realsumm_path)
    scores = {s.system: s for s in system_scores(Dataset.objects.get(name="realsumm"))}
    assert scores["abs_bart_out"].acu == KNOWN_BART
    assert set(scores) == set(expected)
    for system, value in expected.items():
        assert scores[system].acu == pytest.approx(value, abs=1e-12)
        assert scores[system].documents == 100


@pytest.mark.django_db
def test_rose_and_pyramid_imports_of_realsumm_agree(realsumm_path):
    import_dataset(realsumm_path, name="from-pyramid", fmt="pyramid")
    import_dataset(REALSUMM_ROSE, name="from-rose", fmt="rose")
    pyramid = dataset_snapshot(Dataset.objects.get(name="from-pyramid"))
    rose = dataset_snapshot(Dataset.objects.get(name="from-rose"))
    # Same documents, sentences, ACUs (attached to the same sentences), summaries and labels.
    # The pyramid references are tokenized the same way as the RoSE ones.
    assert [(p[0], p[4], p[5], p[6]) for p in pyramid] == [(r[0], r[4], r[5], r[6]) for r in rose]


@pytest.mark.django_db
def test_units_attach_to_their_sentence_in_order(realsumm_path):
    import_dataset(realsumm_path, name="realsumm")
    doc = Document.objects.get(dataset__name="realsumm", external_id="cnndm1017")
    by_sentence = [[a.text for a in s.acus.order_by("position")] for s in doc.reference.sentences.all()]
    assert by_sentence[0] == [
        "Anuradha Koirala has been sleeping outdoors.",
        "425/many young women and girls have been sleeping outdoors.",
        "Many people have been sleeping outdoors because of aftershocks.",
        # shares "anuradha koirala" with sentence 1, only "cnn" with sentence 3
        "Anuradha Koirala was a CNN Hero.",
    ]
    assert by_sentence[1][0] == "Pushpa Basnet was forced to evacuate her residence."
    assert "Seven other CNN Heros were now assisting relief efforts." in by_sentence[2]
