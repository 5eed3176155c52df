"""The judgments of an import have their foreign keys checked as a set (one anti-join per key,
in replica mode around their COPY) where the database role may, else row by row; either way a
judgment naming a missing ACU or assignment is refused and nothing is written."""

import logging

import pytest
from django.db import IntegrityError, connection

from annotation.importing import DatasetImportError
from annotation.importing import foreign_keys as fk
from hits.models import Judgment
from hits.services import dataset_import
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE
from .test_import_copy import row_counts

TABLE = Judgment._meta.db_table
PLAIN_ROLE = "acu_import_fk_plain"


def corrupt_judgments(monkeypatch, column: str) -> None:
    """The judgment rows the import streams into COPY, the first one naming an id that does
    not exist in `column`'s table (past the end of its sequence)."""
    original = dataset_import.insert_rows

    def insert_rows(model, fields, rows, **kwargs):
        if model is Judgment:
            index, given = fields.index(column), iter(rows)

            def corrupted():
                first = list(next(given))
                first[index] = 10**9
                yield tuple(first)
                yield from given

            rows = corrupted()
        return original(model, fields, rows, **kwargs)

    monkeypatch.setattr(dataset_import, "insert_rows", insert_rows)


@pytest.fixture
def anti_joins(monkeypatch):
    """The foreign keys the set-based check verified, one entry per anti-join."""
    calls = []
    original = fk.orphans

    def orphans(table, pk, key, first, last):
        calls.append(key.column)
        return original(table, pk, key, first, last)

    monkeypatch.setattr(fk, "orphans", orphans)
    return calls


def test_the_judgments_table_has_no_trigger_replica_mode_would_skip(db):
    assert fk.skipped_triggers(TABLE) == []
    assert {key.column for key in fk.foreign_keys(TABLE)} == {"assignment_id", "acu_id"}


@pytest.mark.django_db(transaction=True)  # committed for real: per-row checks would run at the commit
@pytest.mark.parametrize("column, target", [("acu", "annotation_acu"), ("assignment", "hits_assignment")])
def test_an_orphan_judgment_is_refused_by_the_set_check_and_nothing_is_written(monkeypatch, anti_joins, column, target):
    assert fk.can_set_replication_role()  # the test database's role is a superuser
    corrupt_judgments(monkeypatch, column)
    before = row_counts()
    with pytest.raises(DatasetImportError) as refused:
        import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    assert f"1 {column}_id value(s) of the new {TABLE} rows name no row of {target}" in str(refused.value)
    assert "(the smallest: 1000000000); nothing was imported" in str(refused.value)
    assert row_counts() == before
    assert column + "_id" in anti_joins


@pytest.mark.django_db(transaction=True)
def test_a_valid_import_is_checked_as_a_set_and_the_role_restored(anti_joins):
    summary = import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    assert summary.judgments == Judgment.objects.count() > 0
    assert sorted(anti_joins) == ["acu_id", "assignment_id"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


@pytest.mark.django_db
def test_the_role_is_restored_inside_the_callers_transaction():
    """SET LOCAL would last to the end of the enclosing transaction: the block resets it."""
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    with connection.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


@pytest.mark.django_db(transaction=True)
def test_without_the_privilege_the_foreign_keys_are_checked_per_row(monkeypatch, anti_joins, caplog):
    monkeypatch.setattr(fk, "can_set_replication_role", lambda: False)
    monkeypatch.setattr(fk, "_logged", set())
    caplog.set_level(logging.WARNING, logger=fk.__name__)
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    import_dataset(DEMO_ROSE, name="demo-2", fmt="rose")
    assert anti_joins == []
    assert caplog.text.count("may not set session_replication_role") == 1  # logged once

    corrupt_judgments(monkeypatch, "acu")
    before = row_counts()
    with pytest.raises(IntegrityError, match="violates foreign key constraint"):  # at the commit
        import_dataset(DEMO_ROSE, name="demo-3", fmt="rose")
    assert row_counts() == before


@pytest.fixture
def plain_role(django_db_blocker):
    """A role that is no superuser, with the rights an import needs on the tables."""
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {PLAIN_ROLE}")
        cursor.execute(f"CREATE ROLE {PLAIN_ROLE} NOSUPERUSER")
        cursor.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {PLAIN_ROLE}")
        cursor.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {PLAIN_ROLE}")
    yield PLAIN_ROLE
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
        cursor.execute(f"DROP OWNED BY {PLAIN_ROLE}")
        cursor.execute(f"DROP ROLE {PLAIN_ROLE}")


@pytest.mark.django_db(transaction=True)
def test_a_role_that_is_no_superuser_imports_with_per_row_checks(plain_role, anti_joins):
    with connection.cursor() as cursor:
        cursor.execute(f"SET ROLE {plain_role}")
    try:
        assert not fk.can_set_replication_role()
        import_dataset(DEMO_ROSE, name="demo", fmt="rose")
        assert anti_joins == [] and Judgment.objects.count() > 0
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
            cursor.execute(f"GRANT SET ON PARAMETER session_replication_role TO {plain_role}")
            cursor.execute(f"SET ROLE {plain_role}")
        assert fk.can_set_replication_role()  # PostgreSQL 15's grant is enough
        import_dataset(DEMO_ROSE, name="demo-2", fmt="rose")
        assert sorted(anti_joins) == ["acu_id", "assignment_id"]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
            cursor.execute(f"REVOKE SET ON PARAMETER session_replication_role FROM {plain_role}")


@pytest.mark.django_db(transaction=True)
def test_a_user_trigger_on_the_judgments_table_keeps_the_per_row_path(anti_joins):
    """A trigger replica mode would skip must fire: the import then checks row by row."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE judgment_audit (n bigint)")
        cursor.execute(
            "CREATE FUNCTION judgment_audit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN INSERT INTO judgment_audit SELECT count(*) FROM new_rows; RETURN NULL; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER judgment_audit AFTER INSERT ON {TABLE} REFERENCING NEW TABLE AS new_rows "
            "FOR EACH STATEMENT EXECUTE FUNCTION judgment_audit()"
        )
    try:
        assert fk.skipped_triggers(TABLE) == ["judgment_audit"]
        summary = import_dataset(DEMO_ROSE, name="demo", fmt="rose")
        assert anti_joins == []
        with connection.cursor() as cursor:
            cursor.execute("SELECT sum(n) FROM judgment_audit")
            assert cursor.fetchone()[0] == summary.judgments
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER judgment_audit ON {TABLE}")
            cursor.execute("DROP FUNCTION judgment_audit()")
            cursor.execute("DROP TABLE judgment_audit")


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_block_keeps_the_per_row_checks(anti_joins):
    """SET LOCAL would not hold in autocommit, and a refusal could not roll anything back."""
    assert not connection.in_atomic_block
    with fk.checked_as_a_set(Judgment), connection.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"
    assert anti_joins == []
