"""Fast bulk inserts: PostgreSQL's COPY for the largest tables, bulk_create elsewhere."""
import csv
import io

from django.db import connection

BATCH_SIZE = 5000
# The benchmark turns COPY off to measure it against bulk_create side by side.
USE_COPY = True


def insert_rows(model, fields: list[str], rows) -> int:
    """Insert rows (tuples in `fields` order) without reading their ids back.

    On PostgreSQL this streams them with COPY, several times faster than multi-row INSERTs
    for the hundreds of thousands of judgments of a RoSE-scale import.
    """
    rows = list(rows)
    if not rows:
        return 0
    if USE_COPY and connection.vendor == "postgresql":
        columns = [model._meta.get_field(f).column for f in fields]
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerows(rows)
        buffer.seek(0)
        table = connection.ops.quote_name(model._meta.db_table)
        cols = ", ".join(connection.ops.quote_name(c) for c in columns)
        with connection.cursor() as cursor:
            cursor.copy_expert(f"COPY {table} ({cols}) FROM STDIN WITH (FORMAT csv)", buffer)
    else:
        attnames = [model._meta.get_field(f).attname for f in fields]
        model.objects.bulk_create([model(**dict(zip(attnames, row))) for row in rows], batch_size=BATCH_SIZE)
    return len(rows)


def create_all(objects: list) -> list:
    """bulk_create that returns the objects with their primary keys set."""
    if not objects:
        return objects
    return type(objects[0]).objects.bulk_create(objects, batch_size=BATCH_SIZE)
