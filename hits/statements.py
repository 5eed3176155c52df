"""Written SQL statements that are atomic on their own (data-modifying CTEs), run anywhere."""

from django.db import connection, transaction


def fetch_one(sql: str, params) -> tuple | None:
    """Run one statement and return its first row. Outside a transaction it commits on its own
    (one round trip, no BEGIN/COMMIT); inside one it runs in a savepoint, so a refused write
    leaves the caller's transaction usable."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            with transaction.atomic():
                cursor.execute(sql, params)
        else:
            cursor.execute(sql, params)
        return cursor.fetchone()
