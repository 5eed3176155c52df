"""References per authoring state and dataset, counted by PostgreSQL (the `ReferenceTally` rows).

As hits.tallies: statement-level triggers with transition tables append the change of each
(dataset, status) count per statement that inserts, updates or deletes references, whatever
code path ran it; `compact` folds each key's rows into one and drops rows of deleted datasets;
`rebuild` recounts from the references. `annotation.selectors.reference_states` reads them
(on other databases it counts the references).
"""

import logging

from django.db import connection, transaction

from annotation.models import Dataset, Document, Reference, ReferenceTally
from config import tally_sql

log = logging.getLogger(__name__)


def available() -> bool:
    return connection.vendor == "postgresql"


def _q(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _append(parts: list[str]) -> str:
    return (
        f"INSERT INTO {_q(ReferenceTally)} (dataset_id, status, n) SELECT d.dataset_id, r.status, sum(r.n)"
        f" FROM ({' UNION ALL '.join(parts)}) r JOIN {_q(Document)} d ON d.id = r.document_id"
        " GROUP BY d.dataset_id, r.status HAVING sum(r.n) <> 0;"
    )


FUNCTION = "annotation_reference_tally"


def install_sql() -> list[str]:
    new, old = "SELECT document_id, status, 1 AS n FROM new_rows", "SELECT document_id, status, -1 AS n FROM old_rows"
    function = tally_sql.function_sql(FUNCTION, _append([new]), _append([new, old]), _append([old]))
    return [function, *tally_sql.triggers_sql(FUNCTION, _q(Reference))]


def uninstall_sql() -> list[str]:
    return tally_sql.drop_sql(FUNCTION, _q(Reference))


def rebuild(dataset_ids: list[int] | None = None) -> int:
    """Recount the tallies of some datasets (all: None) from their references."""
    if not available():
        return 0
    scope, params = ("WHERE d.dataset_id = ANY(%s)", [list(dataset_ids)]) if dataset_ids is not None else ("", [])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {_q(Reference)} IN SHARE MODE")
        cursor.execute(f"DELETE FROM {_q(ReferenceTally)} d {scope}", params)
        cursor.execute(
            f"INSERT INTO {_q(ReferenceTally)} (dataset_id, status, n) SELECT d.dataset_id, r.status, count(*)"
            f" FROM {_q(Reference)} r JOIN {_q(Document)} d ON d.id = r.document_id {scope}"
            " GROUP BY d.dataset_id, r.status",
            params,
        )
        return cursor.rowcount


def compact() -> int:
    """Fold each (dataset, status) into one row; drop rows of deleted datasets. Rows removed."""
    if not available():
        return 0
    tally = _q(ReferenceTally)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {tally} t WHERE NOT EXISTS (SELECT 1 FROM {_q(Dataset)} d WHERE d.id = t.dataset_id)"
        )
        dropped = cursor.rowcount
        folded = tally_sql.fold(cursor, tally, ["dataset_id", "status"], ["n"])
    if dropped or folded:
        log.info("reference tallies compacted: %d rows folded, %d dropped", folded, dropped)
    return dropped + folded
