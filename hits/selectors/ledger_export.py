"""The money ledger as CSV, for reconciling payments with finance: one row per ledger entry.

A batch's ledger (`batch_ledger_csv`) or every batch's together (`all_ledgers_csv`), oldest entry
first, streamed in chunks of text from a server-side cursor (`.iterator()`), so a ledger of any
length is never held in memory. Each entry's money is in one of two columns, by who it pays:
`amount` what a reward or bonus pays the worker, `fee` what a provider's fee row pays the provider
(the other column 0.00), so `amount` adds up to the rewards and bonuses, `fee` to the fees, and the
two to the total the ledger page shows. A fee row's key is "fee:" and the key of the payment it is
charged on. Amounts are exact decimal strings with two decimals in the batch's currency (its
provider's: `money_currency`), never floats; times are ISO 8601 in UTC. Text cells (batch name,
worker id, note...) go through `config.csv_cells.safe_cell`: no formula runs in a spreadsheet.
"""

import csv
from collections.abc import Iterable, Iterator
from datetime import UTC

from django.db.models import QuerySet

from config.csv_cells import CsvLines, safe_cell
from hits.models import Batch, LedgerEntry
from hits.money import cents
from hits.provider_interface import money_currency

COLUMNS = [
    "entry_id",
    "time_utc",
    "batch_id",
    "batch_name",
    "provider",
    "currency",
    "kind",
    "amount",
    "fee",
    "worker_external_id",
    "assignment_id",
    "hit_id",
    "decided_by",
    "note",
    "key",
]
ROWS_PER_CHUNK = 2000
ZERO = cents(0)

# What each row reads of its entry, one query (the batch's own columns are read once per batch).
_FIELDS = (
    "pk",
    "created_at",
    "batch_id",
    "kind",
    "amount",
    "worker__external_id",
    "assignment_id",
    "assignment__hit_id",
    "created_by__username",
    "note",
    "key",
)


def batch_ledger_csv(batch: Batch) -> Iterator[str]:
    """The ledger of one batch as CSV text, in chunks."""
    return _ledger_csv(LedgerEntry.objects.filter(batch=batch), [batch])


def all_ledgers_csv() -> Iterator[str]:
    """The ledger of every batch (every dataset, provider and currency) as CSV text, in chunks."""
    return _ledger_csv(LedgerEntry.objects.all(), Batch.objects.all())


def _ledger_csv(entries: QuerySet[LedgerEntry], batches: Iterable[Batch]) -> Iterator[str]:
    about = {b.pk: (safe_cell(b.name), b.provider, money_currency(b)) for b in batches}
    sink = CsvLines()
    writer = csv.writer(sink)
    writer.writerow(COLUMNS)
    yield sink.take()
    rows = entries.order_by("created_at", "pk").values_list(*_FIELDS)
    for n, (pk, at, batch_id, kind, amount, worker, assignment, hit, by, note, key) in enumerate(
        rows.iterator(chunk_size=ROWS_PER_CHUNK), 1
    ):
        amount = cents(amount)
        paid, fee = (ZERO, amount) if kind == LedgerEntry.Kind.FEE else (amount, ZERO)
        name, provider, currency = about[batch_id]
        writer.writerow(
            [
                pk,
                at.astimezone(UTC).isoformat(),
                batch_id,
                name,
                provider,
                currency,
                kind,
                f"{paid:.2f}",
                f"{fee:.2f}",
                safe_cell(worker),
                assignment,
                hit,
                safe_cell(by or ""),
                safe_cell(note),
                safe_cell(key),
            ]
        )
        if n % ROWS_PER_CHUNK == 0:
            yield sink.take()
    yield sink.take()
