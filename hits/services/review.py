"""Reviewing and paying work: approve, reject, bonus, block, exclude, auto-approve.

The lead's decisions, the provider's (through `mirror`) and auto-approval all come here.

Every payment is a ledger row with a unique key derived from what it pays for (the
assignment, or the bonus form's one-time token), taken under a row lock: a repeated click,
retry or concurrent request finds the key and pays nothing more. The provider is called
before our rows change, so a refused call leaves the assignment as it was.
"""

import logging
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, IntegerField
from django.utils import timezone

from config.errors import ServiceError
from hits import exclusion
from hits.ledger import bonus_key, record_with_fee, reward_key
from hits.models import Assignment, Batch, LedgerEntry, Worker
from hits.money import CENT, MAX_BONUS, MAX_FEEDBACK, MoneyError, cents, format_money, parse_money
from hits.provider_interface import ProviderError, available_providers, get_provider
from hits.release import release
from hits.services.money_budget import batch_money, bonus_passes_budget, bonus_turn

logger = logging.getLogger(__name__)


class ReviewError(ServiceError):
    """A refused review or payment action, with a message for the lead."""


def _refusal(fn, *args) -> str | None:
    """Call the provider; its refusal as a message, else None. The caller raises it as a ReviewError
    only after leaving its transaction, so what the provider adapter recorded of the call is kept:
    the refused call in the batch's provider calls (the batch page's list), a Prolific bonus whose pay
    call was sent (never sent again); our own rows are left as they were."""
    try:
        fn(*args)
    except ProviderError as exc:
        logger.warning("provider refused %s: %s", getattr(fn, "__name__", fn), exc)
        return str(exc)
    return None


def _locked(assignment_id: int, *related: str) -> Assignment:
    """The assignment locked for a decision in the caller's transaction, after the provider's rows the
    decision writes too (`CrowdProvider.lock_for_review`: a Prolific session, which its sync locks
    before the session's assignments), so a decision and a sync never wait for each other in a cycle.
    An expert or imported round has no crowd provider (none of `available_providers` is its name): its
    decisions move no money and nothing else is locked."""
    name = Assignment.objects.filter(pk=assignment_id).values_list("hit__batch__provider", flat=True).get()
    if name in available_providers():
        get_provider(name).lock_for_review(assignment_id)
    return Assignment.objects.select_for_update(of=("self",)).select_related(*related).get(pk=assignment_id)


def approve(*, assignment_id: int, by=None, at_provider: bool = False) -> Assignment:
    """Approve submitted work and record its reward and fee once. `at_provider`: the provider
    approved it already (MTurk's auto-approval, a Prolific decision), so it is not called again."""
    refused = None
    with transaction.atomic():
        a = _locked(assignment_id, "hit__batch", "worker")
        if a.status == Assignment.Status.APPROVED:
            return a  # approving twice pays once
        if a.status != Assignment.Status.SUBMITTED:
            raise ReviewError(
                f"Only submitted work can be approved; this assignment is {a.get_status_display().lower()}."
            )
        provider = get_provider(a.hit.batch.provider)
        if not at_provider:
            refused = _refusal(provider.approve, a)
        if refused is None:
            a.status, a.reviewed_at, a.reviewed_by = Assignment.Status.APPROVED, timezone.now(), by
            a.save(update_fields=["status", "reviewed_at", "reviewed_by"])
            _record_reward(a, provider, by)
    if refused is not None:
        raise ReviewError(refused)
    return a


def _record_reward(a: Assignment, provider, by=None) -> None:
    """The reward of approved work and the provider's fee on it (`CrowdProvider.reward_fee`: by
    `ledger.reward_and_fee`, the rule the bonus budget check counts work still to approve by; on
    Prolific, its session's share of the fee on the submission), in the ledger once (keyed by the
    assignment)."""
    batch = a.hit.batch
    amount = cents(a.hit.reward)
    record_with_fee(
        key=reward_key(a.pk),
        kind=LedgerEntry.Kind.REWARD,
        assignment=a,
        worker=a.worker,
        batch=batch,
        amount=amount,
        fee=provider.reward_fee(a, amount),
        by=by,
        note=provider.payment_note,
    )


def paid_at_provider(*, assignment_id: int) -> bool:
    """The provider approved, and so paid, work whose answers never reached us (an assignment kept
    approved but unconfirmed, so it counts nowhere): its reward and fee reach the ledger once all
    the same. True when the assignment is approved here."""
    with transaction.atomic():
        try:
            a = _locked(assignment_id, "hit__batch", "worker")
        except Assignment.DoesNotExist:
            return False
        if a.status != Assignment.Status.APPROVED:
            return False
        _record_reward(a, get_provider(a.hit.batch.provider))
    return True


def reject(*, assignment_id: int, feedback: str, by=None, at_provider: bool = False) -> Assignment:
    """Reject submitted work with feedback for the worker; nothing is paid. `at_provider`: the
    provider rejected it already, so it is not called again."""
    feedback = (feedback or "").strip()
    if not feedback:
        raise ReviewError("A rejection needs feedback telling the worker why.")
    if len(feedback) > MAX_FEEDBACK:
        raise ReviewError(f"Feedback is limited to {MAX_FEEDBACK} characters ({len(feedback)} given).")
    refused = None
    with transaction.atomic():
        a = _locked(assignment_id, "hit__batch")
        if a.status == Assignment.Status.REJECTED:
            return a
        if a.status != Assignment.Status.SUBMITTED:
            raise ReviewError(
                f"Only submitted work can be rejected; this assignment is {a.get_status_display().lower()}."
            )
        if not at_provider:
            refused = _refusal(get_provider(a.hit.batch.provider).reject, a, feedback)
        if refused is None:
            # A rejected assignment gives its place back (reopened for another worker).
            a.status, a.feedback, a.reviewed_at, a.reviewed_by = (
                Assignment.Status.REJECTED,
                feedback,
                timezone.now(),
                by,
            )
            release(
                Assignment.objects.filter(pk=a.pk),
                status=a.status,
                feedback=a.feedback,
                reviewed_at=a.reviewed_at,
                reviewed_by=a.reviewed_by,
            )
    if refused is not None:
        raise ReviewError(refused)
    return a


NOT_RECORDED = "the database could not record this decision just now, so nothing of it was saved here; try again."


def bulk(action, assignment_ids, **kwargs) -> tuple[int, list[str]]:
    """Apply approve or reject to many assignments; returns (done, error messages). `done` counts
    only the assignments this call changed: one already decided so (a stale page, a double click)
    is neither done again nor an error, so len(ids) - done - len(errors) were decided already."""
    done, errors = 0, []
    for assignment_id in assignment_ids:
        try:
            before = Assignment.objects.filter(pk=assignment_id).values_list("status", flat=True).first()
            after = action(assignment_id=assignment_id, **kwargs)
        except (ReviewError, Assignment.DoesNotExist) as exc:
            errors.append(f"Assignment {assignment_id}: {exc}")
        except DatabaseError:
            # Its transaction was rolled back whole (a lock wait aborted, the connection lost): the
            # decision is not half-written, and the others are still tried, each in its own.
            logger.exception(
                "database error on %s of assignment %s", getattr(action, "__name__", action), assignment_id
            )
            errors.append(f"Assignment {assignment_id}: {NOT_RECORDED}")
        else:
            done += int(after.status != before)
    return done, errors


class OverBudget(ReviewError):
    """A bonus that would take the batch's spend over its budget, sent without "Pay over the budget"."""


def send_bonus(
    *, assignment_id: int, amount, reason: str, token: str, by=None, over_budget: bool = False
) -> tuple[LedgerEntry, bool]:
    """Pay a bonus for an assignment once per `token` (the form's one-time key).

    Parallel bonuses on one batch are taken one at a time (`bonus_turn`, held until the ledger row
    is committed), so each checks the budget against the spend the previous ones recorded: a bonus
    (with its fee) that would pass the budget is refused with OverBudget unless `over_budget` is set.
    A provider whose bonus commits its own steps (Prolific) is called after that transaction, and
    its ledger row written in one more: a retry after a failure past its pay call records, never pays."""
    try:
        amount = parse_money(amount, what="The bonus", minimum=CENT, maximum=MAX_BONUS)
    except MoneyError as exc:
        batch = Batch.objects.filter(hits__assignments__pk=assignment_id).first()
        low, high = (batch_money(batch, m) if batch else format_money(m) for m in (CENT, MAX_BONUS))
        raise ReviewError(f"{exc} A bonus is between {low} and {high}.") from None
    reason = (reason or "").strip()
    if not reason:
        raise ReviewError("Tell the worker what the bonus is for.")
    if not token or len(token) > 60:
        raise ReviewError("The bonus form has expired; open it again.")
    batch_id = Assignment.objects.filter(pk=assignment_id).values_list("hit__batch_id", flat=True).get()
    with bonus_turn(batch_id):  # the batch's bonuses one at a time, until this one is recorded
        return _send_bonus(assignment_id, batch_id, amount, reason, token, by, over_budget)


def _send_bonus(assignment_id, batch_id, amount, reason, token, by, over_budget) -> tuple[LedgerEntry, bool]:
    """`send_bonus` once its input is checked, in the batch's bonus turn."""
    key = bonus_key(token)
    with transaction.atomic():
        # NO KEY UPDATE: an approval holding the assignment may still write its ledger row, which
        # names the batch (FOR UPDATE deadlocked with it); the lock orders this bonus after a
        # budget change (`set_budget`).
        batch = Batch.objects.select_for_update(no_key=True).get(pk=batch_id)
        a = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("hit__batch", "worker")
            .get(pk=assignment_id)
        )
        existing = LedgerEntry.objects.filter(key=key).first()
        if existing:
            # A row naming no HIT: a Prolific bonus of this form stored before bonuses named their HIT.
            if existing.assignment_id not in (a.pk, None) or existing.worker_id != a.worker_id:
                raise ReviewError("This bonus form was already used for another assignment.")
            return existing, False
        if a.status not in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED):
            raise ReviewError("Bonuses go to submitted or approved work.")
        if batch.read_only:
            raise ReviewError("Bonuses go to work done here: this work was imported with the dataset.")
        provider = get_provider(batch.provider)
        fee = provider.fee(amount, batch.assignments_per_hit)
        over = bonus_passes_budget(batch, cents(amount + (fee or 0)))
        if over and not over_budget and not _sent_before(provider, a, reason, token):
            logger.info("bonus refused over budget batch=%s assignment=%s amount=%s", batch.pk, a.pk, amount)
            raise OverBudget(over)
        if not provider.bonus_commits_its_steps:
            # refused: no ledger row, nothing is known paid
            refused = _refusal(provider.send_bonus, a, amount, reason, token, by)
            if refused is None:
                return record_bonus(a, amount, reason, token, by=by)
    if provider.bonus_commits_its_steps:
        # Its own marks (set up, pay call sent, paid) are committed step by step, before and
        # after a pay call that is not idempotent, so they must not sit in our transaction: were
        # it lost after the provider paid, a retry would pay again. The retry of a paid bonus
        # finds it paid and writes the ledger row only.
        refused = _refusal(provider.send_bonus, a, amount, reason, token, by)
        if refused is None:
            with transaction.atomic():
                return record_bonus(a, amount, reason, token, by=by)
    raise ReviewError(refused)


def _sent_before(provider, a, reason, token) -> bool:
    """The provider may have paid this bonus already (a retry after its ledger row was lost): it is
    recorded, never refused over the budget. A provider that cannot tell now: not known paid."""
    try:
        return provider.bonus_sent(a, reason, token)
    except ProviderError as exc:
        logger.warning("provider could not tell whether bonus %s was paid: %s", token, exc)
        return False


def record_bonus(a: Assignment, amount, reason: str, token: str, by=None) -> tuple[LedgerEntry, bool]:
    """The ledger row of a bonus paid for assignment `a` by the form `token`, and the provider's fee
    on it, written once (keyed by the form): by `send_bonus` once the provider paid, or by a
    provider's sync that finds the bonus paid and this row missing (Prolific)."""
    return record_worker_bonus(a.worker, a.hit.batch, amount, reason, token, by=by, assignment=a)


def record_worker_bonus(
    worker: Worker, batch: Batch, amount, reason: str, token: str, by=None, assignment: Assignment | None = None
) -> tuple[LedgerEntry, bool]:
    """`record_bonus` of a bonus paid to `worker` on `batch` by the form `token`, naming its HIT when
    known: a Prolific bonus on one HIT stored before bonuses named their HIT (migration 0031) has
    only its form's token and its participant, and its row has the key and fee its form writes."""
    provider = get_provider(batch.provider)
    return record_with_fee(
        key=bonus_key(token),
        kind=LedgerEntry.Kind.BONUS,
        assignment=assignment,
        worker=worker,
        batch=batch,
        amount=amount,
        fee=provider.fee(amount, batch.assignments_per_hit),
        by=by,
        note=f"{reason} ({provider.payment_note})" if provider.payment_note else reason,
    )


def send_bonus_form(*, assignment_id: int, form, by=None) -> tuple[LedgerEntry, bool]:
    """`send_bonus` with the fields of a bonus form (the batch, assignment and workers pages): amount,
    reason, its one-time token and over_budget ("1": pay past the budget, checked under the batch's lock)."""
    return send_bonus(
        assignment_id=assignment_id,
        amount=form.get("amount", "0"),
        reason=form.get("reason", ""),
        token=form.get("token", ""),
        by=by,
        over_budget=form.get("over_budget") == "1",
    )


def block_worker(*, worker_id: int, reason: str, exclude_pending: bool = False, by=None) -> Worker:
    """Give the worker no more work; optionally leave all their judgments out of scoring."""
    reason = (reason or "").strip()
    if not reason:
        raise ReviewError("Say why the worker is blocked.")
    refused = None
    with transaction.atomic():
        worker = Worker.objects.select_for_update().get(pk=worker_id)
        if not worker.is_expert:  # expert labels have no provider to tell
            refused = _refusal(get_provider(worker.provider).block, worker, reason)
        if refused is None:
            worker.blocked_at = worker.blocked_at or timezone.now()
            worker.block_reason = reason
            worker.save(update_fields=["blocked_at", "block_reason"])
            # Work they hold but have not submitted goes back to the pool.
            release(worker.assignments.filter(status=Assignment.Status.ASSIGNED), released_at=timezone.now())
            if exclude_pending:
                exclusion.set_excluded(worker.pk, True)
                worker.excluded = True
    if refused is not None:
        raise ReviewError(refused)
    return worker


def set_excluded(*, worker_id: int, excluded: bool) -> Worker:
    exclusion.set_excluded(worker_id, excluded)
    return Worker.objects.get(pk=worker_id)


def auto_approve_at(assignment: Assignment):
    """When submitted work is approved by itself: its submission plus its batch's auto-approval delay
    (the beat task looks every 10 minutes); None for work not waiting for a decision.
    `auto_approve_due_query` is this rule in SQL (tests/test_auto_approve_query.py holds them equal)."""
    if assignment.status != Assignment.Status.SUBMITTED or assignment.submitted_at is None:
        return None
    return assignment.submitted_at + timedelta(seconds=assignment.hit.batch.auto_approve_seconds)


# submitted_at + the batch's delay, computed by the database (PostgreSQL: integer * interval; SQLite:
# microseconds through Django's duration functions). The delay is cast to a plain integer first:
# SQLite's duration arithmetic refuses a PositiveIntegerField operand.
_DELAY = ExpressionWrapper(
    ExpressionWrapper(F("hit__batch__auto_approve_seconds"), output_field=IntegerField()) * timedelta(seconds=1),
    output_field=DurationField(),
)
_DUE_AT = ExpressionWrapper(F("submitted_at") + _DELAY, output_field=DateTimeField())


def auto_approve_due_query(now):
    """The submitted assignments `auto_approve_at` finds due at `now`, selected by the database."""
    return (
        Assignment.objects.filter(status=Assignment.Status.SUBMITTED, submitted_at__isnull=False)
        .alias(due_at=_DUE_AT)
        .filter(due_at__lte=now)
    )


def auto_approve_due(now=None) -> int:
    """Approve submitted work older than its batch's auto-approval delay (only the due rows are read;
    `approve` locks each and pays it once, so a second run or a lead's approval meanwhile pays nothing)."""
    now = now or timezone.now()
    due = list(auto_approve_due_query(now).order_by("submitted_at", "pk").values_list("pk", flat=True))
    done, _ = bulk(approve, due)
    return done
