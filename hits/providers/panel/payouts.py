"""Paying at the panel: the approval list (one id per line) and the bonus list (id,amount CSV)
made from the ledger rows not yet paid there, and marking them paid, once per row.

The rows a list covers travel in a signed token, so the lists the lead downloads and the rows
the lead then marks paid are the same rows, whatever was approved in between. Pay per session:
the panel's study reward pays each approved participant (their reward rows), bonuses go on the
bonus list. Pay per HIT: the panel pays nothing itself, so each participant's rewards and
bonuses are summed on the bonus list (the approval list still names whom to approve)."""

import csv
import io
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.core import signing
from django.db import transaction

from hits.models import Batch, LedgerEntry, PanelPayment
from hits.providers.panel.config import config

logger = logging.getLogger(__name__)

ROWS_SALT = "hits.panel.rows:{batch}"
MAX_ROWS = 5000


class PayoutError(Exception):
    """The lists cannot be made or marked; the message is for the lead."""


@dataclass
class Lists:
    approvals: list[str] = field(default_factory=list)
    bonuses: list[tuple[str, Decimal]] = field(default_factory=list)
    entry_ids: list[int] = field(default_factory=list)
    total: Decimal = Decimal("0.00")
    token: str = ""


def unpaid(batch):
    return (
        LedgerEntry.objects.filter(
            batch=batch, kind__in=[LedgerEntry.Kind.REWARD, LedgerEntry.Kind.BONUS], panel_payment__isnull=True
        )
        .select_related("worker")
        .order_by("pk")
    )


def rows_token(batch, entry_ids: list[int]) -> str:
    return signing.dumps(entry_ids, salt=ROWS_SALT.format(batch=batch.pk), compress=True)


def read_rows(batch, token: str) -> list[int]:
    try:
        ids = signing.loads(token or "", salt=ROWS_SALT.format(batch=batch.pk))
    except signing.BadSignature:
        raise PayoutError("These lists are not valid any more; open the batch page again.") from None
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise PayoutError("These lists are not valid any more; open the batch page again.")
    return ids


def lists(batch, entry_ids: list[int] | None = None) -> Lists:
    """The lists of the unpaid rows (or of the rows named, those still unpaid)."""
    entries = unpaid(batch)
    if entry_ids is not None:
        entries = entries.filter(pk__in=entry_ids)
    entries = list(entries[:MAX_ROWS])
    per_session = config(batch)["pay_per"] == "session"
    approvals: set[str] = set()
    bonus: defaultdict[str, Decimal] = defaultdict(lambda: Decimal("0.00"))
    for e in entries:
        pid = e.worker.external_id
        if e.kind == LedgerEntry.Kind.REWARD:
            approvals.add(pid)
            if not per_session:
                bonus[pid] += e.amount
        else:
            bonus[pid] += e.amount
    ids = [e.pk for e in entries]
    return Lists(
        approvals=sorted(approvals),
        bonuses=sorted(bonus.items()),
        entry_ids=ids,
        total=sum((e.amount for e in entries), Decimal("0.00")),
        token=rows_token(batch, ids),
    )


def approval_text(result: Lists) -> str:
    return "".join(f"{pid}\n" for pid in result.approvals)


def bonus_csv(result: Lists) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for pid, amount in result.bonuses:
        writer.writerow([pid, f"{amount:.2f}"])
    return out.getvalue()


def mark_paid(batch, token: str, by=None) -> tuple[int, Decimal]:
    """Mark the rows of the downloaded lists paid at the panel; a row is marked once, so a
    second click marks nothing. Returns (rows marked now, their amount)."""
    ids = read_rows(batch, token)
    with transaction.atomic():
        # One marking per batch at a time: a second click waits, then finds the rows marked.
        Batch.objects.select_for_update().filter(pk=batch.pk).first()
        entries = list(LedgerEntry.objects.filter(batch=batch, pk__in=ids, panel_payment__isnull=True).order_by("pk"))
        PanelPayment.objects.bulk_create(
            [
                PanelPayment(
                    entry=e,
                    batch=batch,
                    paid_list=PanelPayment.List.APPROVAL
                    if e.kind == LedgerEntry.Kind.REWARD
                    else PanelPayment.List.BONUS,
                    paid_by=by,
                )
                for e in entries
            ]
        )
    amount = sum((e.amount for e in entries), Decimal("0.00"))
    logger.info(
        "panel batch %s: %s ledger row(s), %s, marked paid at the panel by %s",
        batch.pk,
        len(entries),
        amount,
        getattr(by, "pk", None) or "system",
    )
    return len(entries), amount


def paid_total(batch) -> Decimal:
    return sum(PanelPayment.objects.filter(batch=batch).values_list("entry__amount", flat=True), Decimal("0.00"))
