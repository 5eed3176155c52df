"""Paying at the panel: the approval list (one id per line) and the bonus list (id,amount CSV)
made from the ledger rows not yet paid there, and marking them paid, once per row.

The rows a list covers travel in a signed token, so the lists the lead downloads and the rows
the lead then marks paid are the same rows, whatever was approved in between (the token names
the last ledger row the page saw and a digest of which rows: changed rows refuse rather than
pay something the lead did not see). Pay per session:
the panel's study reward pays each approved participant (their reward rows), bonuses go on the
bonus list. Pay per HIT: the panel pays nothing itself, so each participant's rewards and
bonuses are summed on the bonus list (the approval list still names whom to approve)."""

import csv
import hashlib
import io
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.core import signing
from django.db import transaction

from config.csv_cells import safe_cell, safe_row
from hits.models import Batch, LedgerEntry
from hits.providers.panel.config import config
from hits.providers.panel.models import PanelPayment

logger = logging.getLogger(__name__)

ROWS_SALT = "hits.panel.rows:{batch}"


class PayoutError(Exception):
    """The lists cannot be made or marked; the message is for the lead."""


@dataclass
class Lists:
    approvals: list[str] = field(default_factory=list)
    bonuses: list[tuple[str, Decimal]] = field(default_factory=list)
    rows: int = 0
    total: Decimal = Decimal("0.00")
    token: str = ""


def unpaid(batch, upto: int | None = None):
    """The batch's reward and bonus rows not yet paid at the panel (up to ledger row `upto`)."""
    entries = LedgerEntry.objects.filter(
        batch=batch, kind__in=[LedgerEntry.Kind.REWARD, LedgerEntry.Kind.BONUS], panel_payment__isnull=True
    )
    if upto is not None:
        entries = entries.filter(pk__lte=upto)
    return entries.select_related("worker").order_by("pk")


def _digest(ids) -> str:
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:24]


def rows_token(batch, entries: list) -> str:
    """Names the rows of the lists: the unpaid ones up to the last ledger row the page saw, and
    a digest of exactly which, so the lists and the marking cover the rows the page showed (or
    are refused when those changed), however many there are."""
    ids = [e.pk for e in entries]
    data = {"upto": max(ids, default=0), "h": _digest(ids)}
    return signing.Signer(salt=ROWS_SALT.format(batch=batch.pk)).sign_object(data)


def read_rows(batch, token: str) -> tuple[int, str]:
    try:
        data = signing.Signer(salt=ROWS_SALT.format(batch=batch.pk)).unsign_object(token or "")
        upto, digest = data["upto"], data["h"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise PayoutError("These lists are not valid any more; open the batch page again.") from None
    if not isinstance(upto, int) or not isinstance(digest, str):
        raise PayoutError("These lists are not valid any more; open the batch page again.")
    return upto, digest


def _check(entries: list, digest: str) -> None:
    if _digest([e.pk for e in entries]) != digest:
        raise PayoutError(
            "The unpaid rows changed since the batch page was shown (marked paid or written meanwhile); "
            "open the batch page again."
        )


def lists(batch, token: str | None = None) -> Lists:
    """The lists of the unpaid rows; with a page's token, exactly the rows that page showed."""
    if token is None:
        entries = list(unpaid(batch))
    else:
        upto, digest = read_rows(batch, token)
        entries = list(unpaid(batch, upto))
        _check(entries, digest)
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
    return Lists(
        approvals=sorted(approvals),
        bonuses=sorted(bonus.items()),
        rows=len(entries),
        total=sum((e.amount for e in entries), Decimal("0.00")),
        token=rows_token(batch, entries),
    )


def approval_text(result: Lists) -> str:
    return "".join(f"{safe_cell(pid)}\n" for pid in result.approvals)


def bonus_csv(result: Lists) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for pid, amount in result.bonuses:
        writer.writerow(safe_row([pid, f"{amount:.2f}"]))
    return out.getvalue()


def mark_paid(batch, token: str, by=None) -> tuple[int, Decimal]:
    """Mark the rows of the downloaded lists paid at the panel; a row is marked once, so a
    second click marks nothing. Returns (rows marked now, their amount)."""
    upto, digest = read_rows(batch, token)
    with transaction.atomic():
        # One marking per batch at a time: a second click waits, then finds the rows marked.
        Batch.objects.select_for_update().filter(pk=batch.pk).first()
        entries = list(unpaid(batch, upto))
        if not entries:
            return 0, Decimal("0.00")  # marked already (a second click)
        _check(entries, digest)
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
