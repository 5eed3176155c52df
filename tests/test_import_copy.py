"""Imports write every table with COPY: the same rows as the ORM path, all of them or none,
texts stored as given, and fresh planner statistics afterwards."""

import json

import pytest
from django.db import IntegrityError, connection

from annotation.importing import bulk
from annotation.models import ACU, Dataset, Document, Reference, ReferenceSentence, Summary, System
from hits.models import HIT, Assignment, Batch, Judgment, Worker
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE
from .snapshots import dataset_snapshot
from .tricky_data import ODD, tricky_file

MODELS = [Dataset, Document, Reference, ReferenceSentence, ACU, System, Summary, Batch, HIT, Assignment, Judgment]
# Columns that differ between two imports of the same file by nature.
VARYING = {"id", "created_at", "updated_at", "submitted_at"}


def row_counts():
    return {m.__name__: m.objects.count() for m in MODELS + [Worker]}


def plain_rows(model, dataset) -> list:
    """The rows of a dataset in one table, without ids, foreign keys and timestamps, sorted."""
    paths = {
        Document: "dataset",
        Reference: "document__dataset",
        ReferenceSentence: "reference__document__dataset",
        ACU: "reference__document__dataset",
        Summary: "document__dataset",
        HIT: "batch__dataset",
        Assignment: "hit__batch__dataset",
        Judgment: "assignment__hit__batch__dataset",
    }
    fields = [f.attname for f in model._meta.concrete_fields if f.attname not in VARYING and not f.is_relation]
    rows = model.objects.filter(**{paths[model]: dataset}).values_list(*fields)
    return sorted(rows, key=repr)


@pytest.mark.django_db
@pytest.mark.portable
def test_copy_stores_what_the_orm_path_stores(tmp_path, monkeypatch):
    path = tricky_file(tmp_path)
    import_dataset(path, name="by-copy", fmt="rose")
    with monkeypatch.context() as m:
        m.setattr(connection, "vendor", "sqlite")  # insert_rows then goes through bulk_create
        import_dataset(path, name="by-orm", fmt="rose")
    fast, slow = Dataset.objects.get(name="by-copy"), Dataset.objects.get(name="by-orm")
    assert dataset_snapshot(fast) == dataset_snapshot(slow)
    for model in (Document, Reference, ReferenceSentence, ACU, Summary, HIT, Assignment, Judgment):
        assert plain_rows(model, fast) == plain_rows(model, slow), model.__name__
    for dataset in (fast, slow):
        batch = dataset.batches.get()
        assignments = Assignment.objects.filter(hit__batch=batch)
        assert assignments.exclude(submitted_at=batch.created_at).count() == 0
        assert assignments.filter(created_at__isnull=True).count() == 0
        assert ACU.objects.filter(reference__document__dataset=dataset, created_at__isnull=True).count() == 0
        assert set(assignments.values_list("status", "confirmed", "external_id")) == {("approved", True, "")}


@pytest.mark.django_db
def test_copy_keeps_texts_as_given(tmp_path):
    """Backslashes, tabs, newlines, carriage returns and control characters survive COPY's text format."""
    path = tricky_file(tmp_path)
    import_dataset(path, name="tricky", fmt="rose")
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    doc = Document.objects.get(dataset__name="tricky", position=0)
    assert doc.source == first["source"].strip() and ODD in doc.source
    assert ACU.objects.filter(reference=doc.reference, text=first["reference_acus"][0].strip()).exists()
    system, text = next(iter(first["system_outputs"].items()))
    assert Summary.objects.get(document=doc, system__name=system).text == text.strip()


@pytest.mark.django_db
def test_a_database_error_inside_a_copy_leaves_nothing(monkeypatch):
    """An error PostgreSQL raises in the middle of the COPYs (here a duplicate key) rolls back
    every table written before it."""
    reserve = bulk.reserve_ids

    def clashing(model, count):
        ids = reserve(model, count)
        return [ids[0]] * count if model is Assignment else ids

    monkeypatch.setattr(bulk, "reserve_ids", clashing)
    before = row_counts()
    with pytest.raises(IntegrityError):
        import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    assert row_counts() == before


@pytest.mark.django_db
def test_import_refreshes_the_planner_statistics():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples FROM pg_class WHERE relname IN %s",
            [tuple(m._meta.db_table for m in (Document, ACU, Summary, HIT, Assignment, Judgment))],
        )
        estimates = dict(cursor.fetchall())
    assert estimates[Judgment._meta.db_table] == Judgment.objects.count() > 0
    assert estimates[Assignment._meta.db_table] == Assignment.objects.count() > 0
    assert estimates[Summary._meta.db_table] == Summary.objects.count() > 0


@pytest.mark.django_db
def test_an_import_with_debug_on_reads_the_file():
    """With DEBUG=1 on PostgreSQL, Django wraps the cursor in CursorDebugWrapper, whose copy_expert takes
    no keyword arguments: every import (and `setup_demo`) failed with "copy_expert() got an unexpected
    keyword argument 'size'" (found by the rating-protocols review)."""
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:  # the debug cursor, as DEBUG=1 gives
        import_dataset(DEMO_ROSE, name="debug-cursor")
    assert Summary.objects.filter(document__dataset__name="debug-cursor").exists()
    assert any("COPY" in q["sql"] for q in queries.captured_queries)  # the PostgreSQL lane only (not portable)
