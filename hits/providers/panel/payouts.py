"""Paying at the panel: the approval list (one id per line) and the bonus list (id,amount CSV)
made from the ledger rows not yet paid there, and marking them paid, once per row.

The rows a list covers travel in a signed token, so the lists the lead downloads and the rows
the lead then marks paid are the same rows, whatever was approved in between (the token names
the last ledger row the page saw and a digest of which rows: changed rows refuse rather than
pay something the lead did not see). Pay per session:
the panel's study reward pays each participant approved for a whole session (their reward rows);
partial sessions' rewards (pro rata, one HIT's price a task) and bonuses go on the bonus list.
Pay per HIT: the panel pays nothing itself, so each participant's rewards and
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
from hits.providers.panel.config import completion_code, config
from hits.providers.panel.models import PanelPayment, PanelSession

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


def whole_sessions(batch, entries: list) -> set[int]:
    """Workers (ids) whose unpaid reward rows in `entries` pay a whole session: their session is
    completed with every one of the batch's tasks per session, and all those tasks' rewards are
    here, none paid before. Anyone else's rewards are paid pro rata on the bonus list."""
    full = int(config(batch)["tasks_per_session"])
    rewards: defaultdict[int, int] = defaultdict(int)
    for e in entries:
        if e.kind == LedgerEntry.Kind.REWARD:
            rewards[e.worker_id] += 1
    completed = set(
        PanelSession.objects.filter(
            batch=batch, worker_id__in=list(rewards), status=PanelSession.Status.COMPLETED, size=full
        ).values_list("worker_id", flat=True)
    )
    return {worker for worker, n in rewards.items() if n == full and worker in completed}


def on_approval_list(batch, entries: list) -> set[int]:
    """The ledger rows (ids) the approval list pays: paying per session, the reward rows of whole
    sessions (the panel's study reward); paying per HIT, none (the bonus list pays everything)."""
    if config(batch)["pay_per"] != "session":
        return set()
    whole = whole_sessions(batch, entries)
    return {e.pk for e in entries if e.kind == LedgerEntry.Kind.REWARD and e.worker_id in whole}


def lists(batch, token: str | None = None) -> Lists:
    """The lists of the unpaid rows; with a page's token, exactly the rows that page showed.
    Paying per session, a participant is on the approval list only for a whole session; a partial
    one (left early, or arrived when fewer tasks were left) is paid its tasks on the bonus list."""
    if token is None:
        entries = list(unpaid(batch))
    else:
        upto, digest = read_rows(batch, token)
        entries = list(unpaid(batch, upto))
        _check(entries, digest)
    return _lists_of(batch, entries)


def _lists_of(batch, entries: list) -> Lists:
    per_session = config(batch)["pay_per"] == "session"
    study_reward = on_approval_list(batch, entries)
    approvals: set[str] = set()
    bonus: defaultdict[str, Decimal] = defaultdict(lambda: Decimal("0.00"))
    for e in entries:
        pid = e.worker.external_id
        if e.pk in study_reward or (not per_session and e.kind == LedgerEntry.Kind.REWARD):
            approvals.add(pid)  # paying per HIT, the list still names whom to approve
        if e.pk not in study_reward:
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


MAX_CODE_LINES = 100_000


def check_codes(batch, approvals: list[str], text: str) -> None:
    """The codes participants entered at the panel (`id,code` lines, e.g. the panel's export):
    each must be the one made for that id, and every id on the approval list must have one.
    PayoutError names the ids that fail, so the lead rejects or asks them at the panel."""
    entered: dict[str, str] = {}
    lines = [line for line in text.splitlines()[: MAX_CODE_LINES + 1] if line.strip()]
    if len(lines) > MAX_CODE_LINES:
        raise PayoutError(f"At most {MAX_CODE_LINES:,} lines of codes.")
    for row in csv.reader(line.replace("\t", ",") for line in lines):
        cells = [c.strip() for c in row if c.strip()]
        if len(cells) != 2:
            raise PayoutError(f"Each line of codes is id,code; this one is not: {','.join(row)[:80]!r}.")
        entered[cells[0]] = cells[1]
    wrong = sorted(pid for pid, code in entered.items() if code.upper() != completion_code(batch, pid).upper())
    missing = sorted(pid for pid in approvals if pid not in entered)
    problems = []
    if wrong:
        problems.append(f"not the code made for them: {', '.join(wrong[:20])}" + (" …" if len(wrong) > 20 else ""))
    if missing:
        problems.append(
            f"on the approval list without a code: {', '.join(missing[:20])}" + (" …" if len(missing) > 20 else "")
        )
    if problems:
        raise PayoutError("Nothing was marked. Codes " + "; ".join(problems) + ".")


def mark_paid(batch, token: str, by=None, codes: str = "") -> tuple[int, Decimal]:
    """Mark the rows of the downloaded lists paid at the panel; a row is marked once, so a
    second click marks nothing. With `codes` (what participants entered at the panel), each is
    checked against the code made for its id first. Returns (rows marked now, their amount)."""
    upto, digest = read_rows(batch, token)
    with transaction.atomic():
        # One marking per batch at a time: a second click waits, then finds the rows marked.
        Batch.objects.select_for_update().filter(pk=batch.pk).first()
        entries = list(unpaid(batch, upto))
        if not entries:
            return 0, Decimal("0.00")  # marked already (a second click)
        _check(entries, digest)
        if codes.strip():
            check_codes(batch, _lists_of(batch, entries).approvals, codes)
        approved_rows = on_approval_list(batch, entries)
        PanelPayment.objects.bulk_create(
            [
                PanelPayment(
                    entry=e,
                    batch=batch,
                    paid_list=PanelPayment.List.APPROVAL if e.pk in approved_rows else PanelPayment.List.BONUS,
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
