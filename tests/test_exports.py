"""The exports read as arrays give, byte for byte, what a plain row-by-row reading gives.

The reference implementations below are the exports as they were before they moved to arrays
(ORM rows, Python dicts, json.dumps, csv.writer). Every export is compared with them on a
dataset that holds what the fast paths have to get right: several annotators, labels missing
(None), ties, a worker excluded, assignments rejected or not confirmed by their provider, two
rounds, texts with quotes, backslashes, control characters and non-ASCII, and system names
that sort differently by code point than in a natural-language collation.
"""

import csv
import io
import json

import numpy as np
import pytest

from annotation.models import ACU, Dataset
from hits.models import Assignment, Judgment, Worker
from hits.selectors import counted_assignments, counted_judgments
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.results.exports import labels as label_arrays
from scoring.results.exports.rose import export_rose, rose_lines
from scoring.results.exports.tables import JUDGMENT_COLUMNS, iter_judgments_csv, write_judgments_csv
from scoring.runs.judgments import labels_by_summary
from scoring.stats.aggregation import majority_present, normalized_acu_score

from .conftest import DEMO_ROSE
from .crowd_data import published_batch
from .tricky_data import tricky_file

# ---- the reference implementations ---------------------------------------------------------


def _reference_acus(dataset) -> dict[int, list]:
    acus: dict[int, list] = {}
    for acu in (
        ACU.objects.filter(reference__document__dataset=dataset)
        .select_related("sentence")
        .order_by("reference_id", "sentence__position", "position", "pk")
    ):
        acus.setdefault(acu.reference_id, []).append(acu)
    return acus


def reference_source(a: Assignment, dataset) -> dict:
    """An assignment's label source: round, kind, worker, seconds, gold, the worker's state."""
    expert = a.worker.provider == "expert"
    source = {
        "round": a.hit.batch.name,
        "kind": "crowd" if a.hit.batch.kind in ("crowd", "imported_crowd") else a.hit.batch.kind,
        "provider": a.worker.provider,
        "worker": label_arrays.annotator_key(a.worker, dataset) if expert else a.worker.external_id,
        "seconds": a.active_seconds,
    }
    if a.gold_total:
        source["gold"] = {"correct": a.gold_correct or 0, "total": a.gold_total}
    if a.worker.blocked_at is not None:
        source.update(blocked=True, block_reason=a.worker.block_reason)
    if a.worker.excluded:
        source["excluded"] = True
    return source


def reference_sources(dataset, batch) -> dict | None:
    """{(summary id, worker id): label source} of the counted work (a worker's first round), or
    None when all of it is the one round imported with the dataset."""
    assignments = list(
        counted_assignments(dataset, batch)
        .filter(hit__batch__protocol="")
        .select_related("hit__batch", "worker")
        .order_by("hit__batch_id", "pk")
    )
    rounds = {a.hit.batch for a in assignments}
    if len(rounds) < 2 and all(b.kind == "imported" for b in rounds):
        return None
    sources: dict = {}
    for a in assignments:
        sources.setdefault((a.hit.summary_id, a.worker_id), reference_source(a, dataset))
    return sources


def reference_uncounted(dataset, batch, acus_by_reference) -> dict[int, list]:
    """{summary id: its uncounted_labels}: rejected work, and excluded workers' counted work."""
    scope = Assignment.objects.filter(hit__batch__dataset=dataset, hit__batch__protocol="", confirmed=True)
    if batch is not None:
        scope = scope.filter(hit__batch=batch)
    out: dict[int, list] = {}
    for a in scope.select_related("hit__batch", "hit__summary__document__reference", "worker").order_by(
        "hit__summary_id", "hit__batch_id", "worker_id", "pk"
    ):
        if not (a.status == "rejected" or (a.status in Assignment.COUNTED and a.worker.excluded)):
            continue
        judged = dict(a.judgments.values_list("acu_id", "present"))
        acus = acus_by_reference.get(a.hit.summary.document.reference.pk, [])
        item = {
            "labels": [int(judged[acu.pk]) if acu.pk in judged else None for acu in acus],
            "status": "rejected" if a.status == "rejected" else "approved",
            "feedback": a.feedback,
            **reference_source(a, dataset),
        }
        out.setdefault(a.hit.summary_id, []).append(item)
    return out


def reference_rose(dataset, batch=None) -> str:
    labels = labels_by_summary(dataset, batch)
    keys = {
        w.pk: label_arrays.annotator_key(w, dataset)
        for w in Worker.objects.filter(pk__in={w for p in labels.values() for w in p})
    }
    sources = reference_sources(dataset, batch) if labels else None
    several = any(len(workers) > 1 for workers in labels.values()) or sources is not None
    acus_by_reference = _reference_acus(dataset)
    uncounted = reference_uncounted(dataset, batch, acus_by_reference)
    lines = []
    for doc in dataset.documents.order_by("position", "pk"):
        reference = doc.reference
        acus = acus_by_reference.get(reference.pk, [])
        record = {
            "example_id": doc.external_id,
            "source": doc.source,
            "reference": "\n".join(s.text for s in reference.sentences.order_by("position")),
            "reference_acus": [a.text for a in acus],
            "reference_acu_sentences": [a.sentence.position for a in acus],
            "reference_approved": reference.status == "approved",
            "system_outputs": {},
            "length_alpha": dataset.length_alpha,
            "annotations": {},
        }
        for summary in sorted(doc.summaries.select_related("system"), key=lambda s: s.system.name):
            record["system_outputs"][summary.system.name] = summary.text
            per_worker = labels.get(summary.pk)
            if not per_worker:
                if summary.pk in uncounted:
                    record["annotations"][summary.system.name] = {"uncounted_labels": uncounted[summary.pk]}
                continue
            present = [sum(1 for w in per_worker.values() if w.get(a.pk) is True) for a in acus]
            total = [sum(1 for w in per_worker.values() if a.pk in w) for a in acus]
            majority = majority_present(present, total).astype(int).tolist()
            score = float(np.mean(majority)) if majority else 0.0
            annotation = {
                "acu_labels": majority,
                "acu": score,
                "normalized_acu": float(
                    normalized_acu_score(score, summary.word_count, reference.word_count, dataset.length_alpha)
                ),
            }
            if several:
                annotation["annotator_labels"] = {
                    keys[wid]: [int(judged[a.pk]) if a.pk in judged else None for a in acus]
                    for wid, judged in sorted(per_worker.items(), key=lambda kv: keys[kv[0]])
                }
            if sources is not None:
                annotation["label_sources"] = {
                    keys[wid]: sources[(summary.pk, wid)] for wid in sorted(per_worker, key=lambda w: keys[w])
                }
            if summary.pk in uncounted:
                annotation["uncounted_labels"] = uncounted[summary.pk]
            record["annotations"][summary.system.name] = annotation
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def reference_csv(dataset, batch=None) -> str:
    index = {}
    for acus in _reference_acus(dataset).values():
        index.update((a.pk, i) for i, a in enumerate(acus))
    workers = {w.pk: label_arrays.annotator_key(w, dataset) for w in Worker.objects.all()}
    rows = (
        counted_judgments(dataset, batch)
        .values_list(
            "assignment__worker_id",
            "assignment__hit__summary__document__external_id",
            "assignment__hit__summary__system__name",
            "acu_id",
            "present",
        )
        .order_by(
            "assignment__hit__summary__document__position",
            "assignment__hit__summary__document_id",
            "assignment__hit__summary__system__name",
            "assignment__worker_id",
            "acu__sentence__position",  # the ACUs of a summary in their reference's order (index)
            "acu__position",
            "acu_id",
        )
    )
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(JUDGMENT_COLUMNS)
    for worker, example, system, acu_id, present in rows:
        writer.writerow([workers[worker], example, system, index[acu_id], int(present)])
    return stream.getvalue()


# ---- the dataset ---------------------------------------------------------------------------


@pytest.fixture
def tricky(tmp_path):
    import_dataset(tricky_file(tmp_path), name="tricky", fmt="rose")
    dataset = Dataset.objects.get(name="tricky")
    crowd = published_batch(dataset)
    simulate_crowd(crowd, workers=3, accuracy=0.8, seed=3, spammers=1)
    assignments = list(Assignment.objects.filter(hit__batch=crowd, status__in=Assignment.COUNTED).order_by("pk"))
    Worker.objects.filter(pk=assignments[0].worker_id).update(excluded=True)
    Assignment.objects.filter(pk=assignments[1].pk).update(status=Assignment.Status.REJECTED)
    Assignment.objects.filter(pk=assignments[2].pk).update(confirmed=False)
    Judgment.objects.filter(pk__in=Judgment.objects.filter(assignment=assignments[3]).values("pk")[:2]).delete()
    assert counted_judgments(dataset, crowd).exclude(assignment__worker__excluded=True).count() > 100
    return dataset, crowd


def imported_round(dataset):
    return dataset.batches.get(kind="imported")


# ---- the tests -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_rose_export_is_the_reference_byte_for_byte(tricky):
    dataset, crowd = tricky
    for batch in (None, crowd, imported_round(dataset)):
        assert "".join(rose_lines(dataset, batch)) == reference_rose(dataset, batch), batch
    text = "".join(rose_lines(dataset))
    assert (
        '"annotator_labels"' in text
        and '"label_sources"' in text
        and '"uncounted_labels"' in text
        and '"excluded": true' in text
        and '"status": "rejected"' in text
        and "null" in text
        and "\\u0007" in text
        and "é ✓ 𝄞" in text
    )


@pytest.mark.django_db
def test_judgments_csv_is_the_reference_byte_for_byte(tricky):
    dataset, crowd = tricky
    for batch in (None, crowd, imported_round(dataset)):
        expected = reference_csv(dataset, batch)
        stream = io.StringIO()
        count = write_judgments_csv(dataset, stream, batch)
        assert stream.getvalue() == expected
        assert "".join(iter_judgments_csv(dataset, batch, rows_per_chunk=7)) == expected
        assert count == expected.count("\r\n") - 1 == counted_judgments(dataset, batch).count()


@pytest.mark.django_db
def test_integer_rows_equal_the_orm_rows(tricky):
    dataset, _ = tricky
    queryset = counted_judgments(dataset).values_list("assignment_id", "acu_id", "present").order_by("pk")
    rows = label_arrays.integer_rows(queryset, 3)
    assert rows.dtype == np.int64
    assert sorted(map(tuple, rows.tolist())) == sorted((a, b, int(p)) for a, b, p in queryset)
    assert label_arrays.integer_rows(queryset.none(), 3).shape == (0, 3)


@pytest.mark.django_db
def test_single_annotator_export_has_no_annotator_labels(realsumm_path):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    dataset = Dataset.objects.get(name="realsumm")
    text = "".join(rose_lines(dataset))
    assert text == reference_rose(dataset)
    assert "annotator_labels" not in text
    stream = io.StringIO()
    assert export_rose(dataset, stream) == 100 and stream.getvalue() == text


@pytest.mark.django_db
def test_exports_of_a_dataset_without_judgments():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    dataset = Dataset.objects.get(name="demo")
    Judgment.objects.filter(assignment__hit__batch__dataset=dataset).delete()
    assert "".join(rose_lines(dataset)) == reference_rose(dataset)
    assert '"annotations": {}}' in next(iter(rose_lines(dataset)))
    assert "".join(iter_judgments_csv(dataset)) == "worker,example_id,system,acu_index,label\r\n"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    ["résumé ✓ 数据", "q\"; filename*=UTF-8''report.html; x=\""],
)
def test_download_names_of_any_dataset_name(client, lead, name, eager_celery, django_capture_on_commit_callbacks):
    """The pages' downloads name the file as the API's do (RFC 6266): a name outside Latin-1 was
    sent RFC 2047-encoded (`=?utf-8?b?...?=`, which no browser reads as a file name) and a quote
    in a name ended the file name early and could add a `filename*` the browser prefers."""
    from django.urls import reverse
    from django.utils.http import content_disposition_header

    with django_capture_on_commit_callbacks(execute=True):  # the import's recompute: the scores to export
        import_dataset(DEMO_ROSE, name=name, fmt="rose")
    dataset = Dataset.objects.get(name=name)
    client.force_login(lead)
    downloads = {
        reverse("dataset_export", args=[dataset.pk]): f"{name}.rose.jsonl",
        reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]): f"{name}-judgments.csv",
        reverse("dashboard_export", args=[dataset.pk, "scores.csv"]): f"{name}-scores.csv",
    }
    for url, filename in downloads.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Disposition"] == content_disposition_header(True, filename), url
