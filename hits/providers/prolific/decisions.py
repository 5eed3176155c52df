"""Prolific's side of a decision: rejection rules, a session's decision recorded once, and
bulk bonuses set up and paid with a single pay call that is never sent twice.

These are adapter facts about Prolific's state (sessions, bonus rows); the review services
decide, and the ledger rows of a bonus go through `hits.ledger`.
"""

from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from hits.ledger import bonus_key, record_with_fee
from hits.models import Batch, LedgerEntry
from hits.money import MAX_BONUS, MAX_FEEDBACK, cents
from hits.provider_interface.base import ProviderError
from hits.providers.prolific.client import ProlificError
from hits.providers.prolific.models import ProlificBonus, ProlificSession

REJECTION_CATEGORIES = [
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
]
MIN_REJECTION_MESSAGE = 100


def split_feedback(feedback: str) -> tuple[str, str]:
    """'[LOW_EFFORT] message' names Prolific's category; without one it is OTHER."""
    text = (feedback or "").strip()
    if text.startswith("[") and "]" in text:
        category, rest = text[1:].split("]", 1)
        if category.strip().upper() in REJECTION_CATEGORIES:
            return category.strip().upper(), rest.strip()
    return "OTHER", text


def check_rejection(category: str, message: str) -> None:
    if category not in REJECTION_CATEGORIES:
        raise ProviderError(f"Prolific needs a rejection category, one of: {', '.join(REJECTION_CATEGORIES)}.")
    if len(message) < MIN_REJECTION_MESSAGE:
        raise ProviderError(
            f"Prolific requires a rejection message of at least {MIN_REJECTION_MESSAGE} characters "
            f"telling the participant why ({len(message)} given)."
        )
    if len(message) > MAX_FEEDBACK:
        raise ProviderError(f"Keep the rejection message under {MAX_FEEDBACK} characters ({len(message)} given).")


def mark_decision(session: ProlificSession, decision: str) -> bool:
    """Record Prolific's decision once (a conditional UPDATE); True when this call made it."""
    changed = ProlificSession.objects.filter(pk=session.pk, decision="").update(
        decision=decision, decided_at=timezone.now()
    )
    session.decision = decision
    return bool(changed)


def main_study_id(batch) -> str:
    main = batch.prolific_studies.filter(kind="main").exclude(study_id="").first()
    if main is None:
        raise ProviderError("The batch has no study at Prolific yet.")
    return main.study_id


# The key of a bonus on one HIT (`ProlificProvider.send_bonus`): this prefix and its form's token.
ASSIGNMENT_KEY = "assignment:"


def pay_call_sent(key: str) -> bool:
    """Whether the pay call of the bulk bonus recorded under `key` was sent: its money may have left,
    so it is recorded, never refused over the budget (one Prolific refused paid nothing)."""
    return ProlificBonus.objects.filter(
        key=key[:100], state__in=[ProlificBonus.State.SENT, ProlificBonus.State.PAID]
    ).exists()


def pay_bonus(
    provider, batch: Batch, amounts: dict, reason: str, *, key: str, by=None, assignment=None
) -> ProlificBonus:
    """Bonus sessions ({session: amount}) with one bulk bonus, recorded once under `key`:
    set up at Prolific, then paid with a single pay call that is never sent twice. `assignment`:
    the one HIT a bonus of `review.send_bonus` pays for, which writes its ledger row itself;
    a bulk bonus's rows are written here (`record_paid`)."""
    reason = (reason or "").strip()
    if not reason:
        raise ProviderError("Tell the participants what the bonus is for.")
    lines = []
    for session, amount in amounts.items():
        amount = cents(amount)
        if not Decimal("0.01") <= amount <= MAX_BONUS:
            raise ProviderError(f"A bonus must be between 0.01 and {MAX_BONUS}.")
        lines.append({"session": session.pk, "submission": session.session_id, "amount": f"{amount:.2f}"})
    # Durable: each step must commit before the pay call, so a caller's transaction around it (which
    # would take the steps back with it after Prolific paid, and the bonus turn's lock, so that a retry
    # pays again and another bonus passes the budget with this one's room) is refused before a call.
    with transaction.atomic(durable=True):
        bonus, created = ProlificBonus.objects.select_for_update().get_or_create(
            key=key[:100],
            defaults={"batch": batch, "lines": lines, "reason": reason, "created_by": by, "assignment": assignment},
        )
    if not created and bonus.lines != lines:
        raise ProviderError("This bonus form was already used for other amounts; open it again.")
    if bonus.state == ProlificBonus.State.SENT:
        raise ProviderError(
            f"The pay call of bulk bonus {bonus.bulk_id} reached Prolific but its answer was lost: check the "
            "study's bonuses at Prolific. It is never sent twice."
        )
    if bonus.state == ProlificBonus.State.NEW:
        csv = "".join(f"{line['submission']},{line['amount']}\n" for line in lines)
        result = provider.call(
            batch, "set up bonus", f"{len(lines)} submissions", "setup_bonuses", main_study_id(batch), csv
        )
        bonus.bulk_id, bonus.total_cents = str(result["id"]), int(result.get("total_amount") or 0) or None
        bonus.state = ProlificBonus.State.SET_UP
        bonus.save(update_fields=["bulk_id", "total_cents", "state", "updated_at"])
    if bonus.state == ProlificBonus.State.SET_UP:
        # Claim the single pay call with a conditional UPDATE before sending it.
        if not ProlificBonus.objects.filter(pk=bonus.pk, state=ProlificBonus.State.SET_UP).update(
            state=ProlificBonus.State.SENT
        ):
            raise ProviderError("This bonus is being paid by another request.")
        try:
            provider.call(batch, "pay bonus", bonus.bulk_id, "pay_bonuses", bonus.bulk_id)
        except ProlificError as exc:
            if exc.status < 500:  # refused: nothing was paid, it may be paid later
                ProlificBonus.objects.filter(pk=bonus.pk).update(state=ProlificBonus.State.SET_UP, error=str(exc))
            raise
        ProlificBonus.objects.filter(pk=bonus.pk).update(state=ProlificBonus.State.PAID, error="")
        bonus.state = ProlificBonus.State.PAID
    if bonus.assignment_id is None:
        record_paid(provider, bonus, by=by)
    return bonus


def bonus_lines(provider, bonus: ProlificBonus) -> list[tuple[int, Decimal, Decimal]]:
    """(session pk, amount, Prolific's fee) of each line of a bonus: what its ledger rows record."""
    per_hit = bonus.batch.assignments_per_hit
    return [
        (line["session"], Decimal(line["amount"]), provider.fee(Decimal(line["amount"]), per_hit))
        for line in bonus.lines
    ]


def ledger_key(bonus: ProlificBonus, session_pk: int) -> str:
    """The key of the ledger row of a bonus's line (of the session `session_pk`), whoever writes it:
    a bonus on one HIT the row its form writes (`ledger.bonus_key` of the form's token), a bulk
    bonus one row per line (its key and the session)."""
    if bonus.key.startswith(ASSIGNMENT_KEY):
        return bonus_key(bonus.key.removeprefix(ASSIGNMENT_KEY))
    return f"bonus:{bonus.key}:{session_pk}"[:100]


def record_paid(provider, bonus: ProlificBonus, by=None) -> int:
    """The ledger rows of a paid bulk bonus, one per line with its fee (`record_with_fee`, keyed by
    the bonus and the session, so each is written once whoever writes it: the request that paid it,
    the same form sent again, or the sync), and its `recorded` mark, in one transaction.
    Returns the number of rows written now."""
    lines = bonus_lines(provider, bonus)
    sessions = ProlificSession.objects.filter(pk__in=[pk for pk, _, _ in lines]).select_related("worker")
    workers = {s.pk: s.worker for s in sessions}
    written = 0
    with transaction.atomic():
        for session_pk, amount, fee in lines:
            _, created = record_with_fee(
                key=ledger_key(bonus, session_pk),
                kind=LedgerEntry.Kind.BONUS,
                assignment=None,
                worker=workers[session_pk],
                batch=bonus.batch,
                amount=amount,
                fee=fee,
                by=by,
                note=bonus.reason,
            )
            written += created
        ProlificBonus.objects.filter(pk=bonus.pk).update(recorded=True)
    return written


def outcome_unknown(provider, batch: Batch) -> list[tuple[ProlificBonus, Decimal]]:
    """The batch's bonuses whose pay call was sent but whose answer was lost (a timeout, a 5xx),
    each with what it may have cost (its amounts and Prolific's fees). Prolific's API documents no
    call that reads a bulk bonus back, so they stay so until a lead checks at Prolific and settles
    each on the batch page (`bonuses.settle_unknown_bonus`); meanwhile the budget check counts them as
    spent (`ProlificProvider.unsettled_spend`)."""
    return [
        (bonus, sum((amount + fee for _, amount, fee in bonus_lines(provider, bonus)), Decimal("0")))
        for bonus in batch.prolific_bonuses.filter(state=ProlificBonus.State.SENT).order_by("pk")
    ]


def paid_unrecorded(provider, batch: Batch) -> list[tuple[ProlificBonus, Decimal]]:
    """The batch's bonuses Prolific paid whose ledger rows are (some of them) missing, each with the
    cost of its lines without a row (amounts and Prolific's fees): the write after the pay call
    failed, and the sync (`bonuses.record_paid_bonuses`, every five minutes) has not written them
    yet. The money has left, so the budget check counts it (`ProlificProvider.unsettled_spend`);
    a line is counted here or by its ledger row, never both (the rows are found by their keys)."""
    bonuses = list(batch.prolific_bonuses.filter(state=ProlificBonus.State.PAID, recorded=False).order_by("pk"))
    keys = {(b.pk, line["session"]): ledger_key(b, line["session"]) for b in bonuses for line in b.lines}
    written = set(LedgerEntry.objects.filter(key__in=set(keys.values())).values_list("key", flat=True))
    out = []
    for bonus in bonuses:
        missing = [
            amount + fee
            for session, amount, fee in bonus_lines(provider, bonus)
            if keys[bonus.pk, session] not in written
        ]
        if missing:
            out.append((bonus, sum(missing, Decimal("0"))))
    return out
