"""The crowd path's written statements run prepared on PostgreSQL: planned once per connection,
prepared again on a new connection or when the server lost them (hits/statements.py, issue 14)."""

import logging

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from hits import statements


def test_placeholders_become_numbered_parameters():
    assert statements.numbered("SELECT %s, %s || '%%'", [1, "a"]) == ("SELECT $1, $2 || '%%'", [1, "a"])
    text, args = statements.numbered("SELECT %(a)s, %(b)s, %(a)s::int", {"b": 2, "a": 1, "unused": 3})
    assert (text, args) == ("SELECT $1, $2, $1::int", [1, 2])
    with pytest.raises(ValueError, match="2 placeholders for 1 parameters"):
        statements.numbered("SELECT %s, %s", [1])


def _prepared_names() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {row[0] for row in cursor.fetchall()}


def _run(sql, params):
    with CaptureQueriesContext(connection) as captured, connection.cursor() as cursor:
        statements.execute(cursor, sql, params)
        row = cursor.fetchone()
    return row, [q["sql"] for q in captured.captured_queries]


SQL = "SELECT %(word)s || '%%' || %(n)s::int, %(n)s::int * 2"


@pytest.mark.django_db(transaction=True)
def test_a_statement_is_prepared_once_per_connection_and_again_after_a_new_one():
    first, sent = _run(SQL, {"word": "a", "n": 3})
    assert first == ("a%3", 6)
    assert len(sent) == 1 and sent[0].startswith("PREPARE acu_") and "EXECUTE acu_" in sent[0]
    name = sent[0].split()[1]
    assert name in _prepared_names()

    again, sent = _run(SQL, {"word": "b", "n": 4})
    assert again == ("b%4", 8) and sent == [f"EXECUTE {name}('b', 4)"]

    connection.close()  # a new connection knows no statement: prepared again
    after, sent = _run(SQL, {"word": "c", "n": 5})
    assert after == ("c%5", 10) and sent[0].startswith(f"PREPARE {name} AS")


@pytest.mark.django_db(transaction=True)
def test_a_statement_the_server_lost_is_prepared_again(caplog):
    _run(SQL, {"word": "a", "n": 1})
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")  # as a pooler handing out another session would
    with caplog.at_level(logging.WARNING, logger="hits.statements"):
        row, sent = _run(SQL, {"word": "z", "n": 2})
    assert row == ("z%2", 4)
    assert sent[0].startswith("EXECUTE") and sent[1].startswith("PREPARE")
    assert "was gone from the session" in caplog.text


@pytest.mark.django_db
def test_switched_off_the_statement_runs_as_written(settings):
    settings.DB_PREPARED_STATEMENTS = False
    row, sent = _run(SQL, {"word": "a", "n": 3})
    assert row == ("a%3", 6) and sent == ["SELECT 'a' || '%' || 3::int, 3::int * 2"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_first_run_that_fails_leaves_the_statement_prepared_for_the_next(in_transaction):
    """The EXECUTE sent with the PREPARE fails (here a division by zero; a unique violation
    in real use): the statement stays prepared on the server, and the next run uses it."""
    from django.db import DataError, transaction

    sql = "SELECT 10 / %s::int"
    context = transaction.atomic if in_transaction else _nothing
    with context():
        try:
            with transaction.atomic():  # a savepoint when inside a transaction
                _run(sql, [0])
        except DataError:
            pass
        else:
            pytest.fail("a division by zero passed")
        row, sent = _run(sql, [5])
    assert row == (2,) and len(sent) == 1 and sent[0].startswith("EXECUTE acu_")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
