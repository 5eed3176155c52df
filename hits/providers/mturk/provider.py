"""Amazon Mechanical Turk provider (boto3 `mturk` client, API 2017-01-17).

Facts followed (shared/design/crowd-providers.md and the MTurk API reference):
- one HIT type per pay bucket (`create_hit_type`), one HIT per summary
  (`create_hit_with_hit_type`) with an ExternalQuestion to our HTTPS task page;
- `UniqueRequestToken` derived from our primary keys, so a rerun after a crash never
  creates a HIT twice: MTurk answers a repeated token with an error naming the HIT id;
- requirements: approval rate >= 98% (000000000000000000L0), approved HITs >= 10,000
  (00000000000000000040), locale In US/GB (00000000000000000071), our qualification;
- fees: 20% of rewards and bonuses (at least $0.01), another 20% from 10 assignments;
- amounts as strings with two decimals; RequesterFeedback <= 1024 characters.

MTurk closed to requesters on 2026-09-30: every failure becomes a ProviderError message,
and publishing stays resumable (HITs already created keep their ids).
"""

import hashlib
import logging
from datetime import UTC, datetime, timedelta
from decimal import ROUND_CEILING, Decimal

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from hits.gold import test_items
from hits.ledger import bonus_key
from hits.models import Batch, LedgerEntry, ProviderCall
from hits.money import cents, money_string
from hits.provider_interface.base import Capability, CrowdProvider, ProviderError
from hits.providers.mturk.client import MTurkError, call, make_client
from hits.providers.mturk.config import OPTIONS, config
from hits.providers.mturk.models import MTurkBonus
from hits.providers.mturk.questions import answer_key, external_question, qualification_form
from hits.sheets import draw

logger = logging.getLogger(__name__)

# Tests replace this with a factory returning a Stubber-wrapped client.
CLIENT_FACTORY = make_client

APPROVAL_RATE = "000000000000000000L0"
APPROVED_HITS = "00000000000000000040"
LOCALE = "00000000000000000071"
ASSIGNMENT_NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE"
ACTIONS = ("DiscoverPreviewAndAccept",)
MAX_TOKEN = 64
UNKNOWN_BONUS = (
    "The bonus may have been paid: until MTurk lists it paid it counts as spent against the budget, "
    "and sending the form again never pays it twice."
)


def environment(sandbox: bool) -> str:
    return "mturk-sandbox" if sandbox else "mturk"


def request_token(kind: str, key) -> str:
    """A UniqueRequestToken from our own ids (never random), unique per deployment."""
    deployment = hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest()[:8]
    token = f"acu-{deployment}-{kind}-{key}"
    if len(token) > MAX_TOKEN:
        token = f"acu-{deployment}-{kind}-{hashlib.sha256(str(key).encode()).hexdigest()[:32]}"
    return token[:MAX_TOKEN]


def percent_at_least(share: float) -> int:
    """A share (0-1) as MTurk's whole-number percentage, rounded up. The requirement's bar is
    `percent_at_least(pass_score)` (a pass score of 82.5% needs 83, never 82, which a worker
    below the pass score reaches), and a passed worker is granted `percent_at_least(score)`,
    which always meets it (rounded to the nearest, a score of exactly 82.5% was granted 82).
    Through the float's shortest decimal, so 0.29 is 29, not 28.999... rounded up to 29."""
    return int((Decimal(repr(float(share))) * 100).to_integral_value(ROUND_CEILING))


def task_url() -> str:
    base = getattr(settings, "PUBLIC_BASE_URL", "").rstrip("/")
    if not base.startswith("https://"):
        raise ProviderError(
            "Set PUBLIC_BASE_URL to this site's https:// address: MTurk only loads task pages over HTTPS."
        )
    return base + reverse("mturk_task")


def requirements(batch, qualification_type_id: str | None = None) -> list[dict]:
    cfg = config(batch)
    reqs = [
        {
            "QualificationTypeId": APPROVAL_RATE,
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [int(cfg["min_approval_rate"])],
            "ActionsGuarded": ACTIONS[0],
        },
        {
            "QualificationTypeId": APPROVED_HITS,
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [int(cfg["min_approved_hits"])],
            "ActionsGuarded": ACTIONS[0],
        },
    ]
    if cfg["locales"]:
        reqs.append(
            {
                "QualificationTypeId": LOCALE,
                "Comparator": "In",
                "LocaleValues": [{"Country": c} for c in cfg["locales"]],
                "ActionsGuarded": ACTIONS[0],
            }
        )
    if qualification_type_id:
        pass_percent = percent_at_least(batch.qualification_test.pass_score)
        reqs.append(
            {
                "QualificationTypeId": qualification_type_id,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [pass_percent],
                "ActionsGuarded": ACTIONS[0],
            }
        )
    return reqs


class MTurkProvider(CrowdProvider):
    name = "mturk"
    label = "Amazon Mechanical Turk"
    capabilities = frozenset(
        {Capability.EXTEND, Capability.BALANCE, Capability.SYNC, Capability.PER_HIT_PUBLISH, Capability.MORE_PLACES}
    )
    options = OPTIONS
    closed = "closed to requesters since 2026-09-30: choose Prolific or a participant panel"
    # Its bonus's mark is committed before the pay call (`send_bonus`), so the review calls it after
    # its own transaction: a ledger write that fails then leaves the mark, which the sync records.
    bonus_commits_its_steps = True

    def __init__(self, sandbox: bool | None = None):
        self._clients: dict[bool, object] = {}
        self.sandbox = sandbox

    def client(self, sandbox: bool):
        if sandbox not in self._clients:
            self._clients[sandbox] = CLIENT_FACTORY(sandbox)
        return self._clients[sandbox]

    def _call(self, batch, sandbox: bool, operation: str, target: str = "", **params):
        try:
            result = call(self.client(sandbox), operation, **params)
        except ProviderError as exc:
            logger.warning("MTurk %s %s for batch %s failed: %s", operation, target, getattr(batch, "pk", None), exc)
            ProviderCall.objects.create(batch=batch, action=operation, target=target, ok=False, error=str(exc))
            raise
        logger.info("MTurk %s %s for batch %s: ok", operation, target, getattr(batch, "pk", None))
        ProviderCall.objects.create(batch=batch, action=operation, target=target, ok=True)
        return result

    # ---- money ------------------------------------------------------------------------
    def fee(self, amount, assignments_per_hit: int) -> Decimal:
        rate = Decimal("0.40") if assignments_per_hit >= 10 else Decimal("0.20")
        return max(Decimal("0.01"), cents(Decimal(amount) * rate)) if Decimal(amount) > 0 else Decimal("0.00")

    def balance(self, batch) -> Decimal:
        result = self._call(batch, config(batch)["sandbox"], "get_account_balance")
        return Decimal(result["AvailableBalance"])

    def check_balance(self, batch) -> Decimal:
        """Refuse when the cost of the HITs still to create exceeds the available balance."""
        needed = Decimal("0.00")
        for reward, places in batch.hits.filter(external_id="").values_list("reward", "max_assignments"):
            needed += (cents(reward) + self.fee(reward, batch.assignments_per_hit)) * places
        available = self.balance(batch)
        if needed > available:
            raise ProviderError(
                f"The batch needs ${needed} (rewards and MTurk fees) but the account has ${available}. "
                "Add funds or make the batch smaller."
            )
        return available

    # ---- qualification ----------------------------------------------------------------
    def qualification_type(self, batch) -> str | None:
        """Our test as an MTurk qualification type, created once per environment."""
        test = batch.qualification_test
        if test is None:
            return None
        cfg = config(batch)
        env = environment(cfg["sandbox"])
        if test.external_ids.get(env):
            return test.external_ids[env]
        params = {
            "Name": f"{test.name} (#{test.pk})",
            "Description": "Decide which facts a short summary states. Passing gives access to our ACU tasks.",
            "QualificationTypeStatus": "Active",
            "Keywords": cfg["keywords"],
        }
        if cfg["qualification_mode"] == "mturk_test":
            items = qualification_items(test)
            params.update(
                Test=qualification_form(test.name, "Mark every fact Present or Not present.", items),
                AnswerKey=answer_key(items),
                TestDurationInSeconds=1800,
            )
            if test.max_attempts > 1:
                # MTurk: "If not specified, retries are disabled" (one attempt); with a delay a
                # worker may retry after it, as often as they like (MTurk counts no attempts).
                params["RetryDelayInSeconds"] = test.retry_after_hours * 3600
        result = self._call(batch, cfg["sandbox"], "create_qualification_type", target=test.name, **params)
        test.external_ids = {**test.external_ids, env: result["QualificationType"]["QualificationTypeId"]}
        test.save(update_fields=["external_ids"])
        return test.external_ids[env]

    def grant_qualification(self, test, worker, score: float, sandbox: bool, batch=None) -> None:
        """After a test taken on our own pages: give the worker the score as a percentage (rounded
        up, `percent_at_least`), at least the pass score: a worker passed with a score under it
        (sheets that never showed them below it: hits.qualification_bound.verdict) must meet the
        requirement too. The call, refused or not, is listed on `batch`'s page."""
        type_id = test.external_ids.get(environment(sandbox))
        if not type_id:
            raise ProviderError("This test has no MTurk qualification type yet; publish a batch that uses it first.")
        self._call(
            batch,
            sandbox,
            "associate_qualification_with_worker",
            target=worker.external_id,
            QualificationTypeId=type_id,
            WorkerId=worker.external_id,
            IntegerValue=percent_at_least(max(score, test.pass_score)),
            SendNotification=False,
        )

    # ---- publishing -------------------------------------------------------------------
    def publish(self, batch) -> None:
        cfg = config(batch)
        sandbox = cfg["sandbox"]
        question = external_question(task_url())
        self.check_balance(batch)
        qual = self.qualification_type(batch)
        reqs = requirements(batch, qual)
        for bucket in batch.buckets.all():
            if bucket.external_type_id or not bucket.hits().filter(external_id="").exists():
                continue
            result = self._call(
                batch,
                sandbox,
                "create_hit_type",
                target=str(bucket),
                Title=batch.title,
                Description=batch.description,
                Keywords=cfg["keywords"],
                Reward=money_string(bucket.reward),
                AssignmentDurationInSeconds=batch.assignment_duration_seconds,
                AutoApprovalDelayInSeconds=batch.auto_approve_seconds,
                QualificationRequirements=reqs,
            )
            bucket.external_type_id = result["HITTypeId"]
            bucket.save(update_fields=["external_type_id"])
        types = batch_bucket_types(batch)
        for hit in batch.hits.filter(external_id="").order_by("pk"):
            params = {
                "HITTypeId": types(hit.acu_count),
                "MaxAssignments": hit.max_assignments,
                "LifetimeInSeconds": batch.lifetime_seconds,
                "Question": question,
                "RequesterAnnotation": f"acu-batch:{batch.pk};hit:{hit.pk}",
                "UniqueRequestToken": request_token("hit", hit.pk),
            }
            try:
                hit_id = self._call(batch, sandbox, "create_hit_with_hit_type", target=f"HIT {hit.pk}", **params)[
                    "HIT"
                ]["HITId"]
            except MTurkError as exc:
                if not exc.existing_hit_id:  # a real refusal: stop here, resumable
                    raise
                hit_id = exc.existing_hit_id  # created by an earlier, interrupted run
            with transaction.atomic():
                type(hit).objects.filter(pk=hit.pk).update(external_id=hit_id, provider_places=hit.max_assignments)

    def open_places(self, hit, total: int) -> int:
        """CreateAdditionalAssignmentsForHIT, one place per call, each with its own
        UniqueRequestToken (the HIT and the place's number), after GetHIT says how many MTurk
        has: a retry after a lost answer asks only for what is missing, and a call MTurk did
        receive is not repeated with another token. MTurk keeps a HIT created with fewer than
        10 assignments under 10 (so does MAX_ASSIGNMENTS)."""
        batch = hit.batch
        sandbox = config(batch)["sandbox"]
        if not hit.external_id:
            return 0  # not published there yet: publishing creates it with all its places
        if total >= 10:
            raise ProviderError(
                f"MTurk: HIT {hit.pk} was created with fewer than 10 assignments and must stay under 10."
            )
        have = int(
            self._call(batch, sandbox, "get_hit", target=f"HIT {hit.pk}", HITId=hit.external_id)["HIT"][
                "MaxAssignments"
            ]
        )
        for n in range(have + 1, total + 1):
            self._call(
                batch,
                sandbox,
                "create_additional_assignments_for_hit",
                target=f"HIT {hit.pk} place {n}",
                HITId=hit.external_id,
                NumberOfAdditionalAssignments=1,
                UniqueRequestToken=request_token("place", f"{hit.pk}-{n}"),
            )
            have = n
            type(hit).objects.filter(pk=hit.pk).update(provider_places=n)
        if hit.provider_places != have:
            type(hit).objects.filter(pk=hit.pk).update(provider_places=have)
        return have

    def _set_expiry(self, batch, when: datetime) -> int:
        sandbox = config(batch)["sandbox"]
        count = 0
        for hit in batch.hits.exclude(external_id="").order_by("pk"):  # a stable order (logs, retries)
            self._call(
                batch,
                sandbox,
                "update_expiration_for_hit",
                target=hit.external_id,
                HITId=hit.external_id,
                ExpireAt=when,
            )
            count += 1
        return count

    def stop(self, batch) -> None:
        """Expire every HIT now (MTurk treats a past ExpireAt as 'expire immediately')."""
        self._set_expiry(batch, datetime(2015, 1, 1, tzinfo=UTC))

    def extend(self, batch, hours: float) -> None:
        self._set_expiry(batch, timezone.now() + timedelta(hours=hours))

    # ---- review -----------------------------------------------------------------------
    def approve(self, assignment) -> None:
        self._review(assignment, "approve_assignment", "Approved")

    def reject(self, assignment, feedback: str) -> None:
        self._review(assignment, "reject_assignment", "Rejected", RequesterFeedback=feedback[:1024])

    def _review(self, assignment, operation: str, done: str, **params) -> None:
        """Approve or reject at MTurk. A repeat fails there (approving twice, or botocore retrying a
        call whose first answer was lost); if MTurk already shows the assignment `done`, that is success."""
        batch = assignment.hit.batch
        sandbox = config(batch)["sandbox"]
        target = assignment.external_id
        try:
            self._call(batch, sandbox, operation, target=target, AssignmentId=target, **params)
        except MTurkError:
            answer = self._call(batch, sandbox, "get_assignment", target=target, AssignmentId=target)
            if answer["Assignment"]["AssignmentStatus"] != done:
                raise

    def send_bonus(self, assignment, amount, reason: str, token: str, by=None) -> None:
        """Pay a bonus once per form `token`. Its mark (`MTurkBonus`) is committed before the call, so
        money that left is never without a trace: a call whose answer was lost leaves it `sent` (it
        may have paid), counted as spent (`unsettled_spend`) until MTurk lists it paid or the form,
        sent again, pays it. MTurk deduplicates a UniqueRequestToken for 24 hours only, so a retry a
        day after a lost answer would pay again: the Reason carries a reference of the token, and a
        bonus of the assignment already paid with it is not sent again. Called outside the review's
        transaction (`bonus_commits_its_steps`): the request then writes its ledger row, or the sync
        does when that write failed (`bonuses.record_paid_bonuses`)."""
        batch = assignment.hit.batch
        bonus = self._bonus_mark(assignment, amount, reason, token, by)
        if bonus.state == MTurkBonus.State.PAID:
            return
        if self.paid_at_mturk(assignment, reason, token):
            self._mark(bonus, MTurkBonus.State.PAID)
            return  # paid at MTurk already (a retry whose first call's answer was lost)
        self._mark(bonus, MTurkBonus.State.SENT)
        digest = hashlib.sha256(token.encode()).hexdigest()[:32]
        try:
            self._call(
                batch,
                config(batch)["sandbox"],
                "send_bonus",
                target=assignment.external_id,
                WorkerId=assignment.worker.external_id,
                AssignmentId=assignment.external_id,
                BonusAmount=money_string(amount),
                Reason=f"{reason} (ref {digest[:10]})",
                UniqueRequestToken=request_token("bonus", digest),
            )
        except MTurkError as exc:
            if "already" in str(exc).lower():  # a repeated token: MTurk already paid it
                self._mark(bonus, MTurkBonus.State.PAID)
                return
            if exc.code != "ServiceFault":  # MTurk refused the request: nothing was paid
                self._mark(bonus, MTurkBonus.State.NOT_PAID, error=str(exc))
                raise
            raise ProviderError(f"{exc} {UNKNOWN_BONUS}") from None
        except ProviderError as exc:
            raise ProviderError(f"{exc} {UNKNOWN_BONUS}") from None
        self._mark(bonus, MTurkBonus.State.PAID)

    @staticmethod
    def _bonus_mark(assignment, amount, reason: str, token: str, by) -> MTurkBonus:
        """The bonus's mark, created (and committed) once per form; a form used for another
        assignment or amount is refused."""
        with transaction.atomic(durable=True):  # committed before the call: never in a caller's transaction
            bonus, _ = MTurkBonus.objects.get_or_create(
                token=token,
                defaults={
                    "batch": assignment.hit.batch,
                    "assignment": assignment,
                    "amount": cents(amount),
                    "reason": reason,
                    "created_by": by,
                },
            )
        if bonus.assignment_id != assignment.pk or bonus.amount != cents(amount):
            raise ProviderError("This bonus form was already used for another bonus; open it again.")
        return bonus

    @staticmethod
    def _mark(bonus: MTurkBonus, state: str, error: str = "") -> None:
        MTurkBonus.objects.filter(pk=bonus.pk).update(state=state, error=error, updated_at=timezone.now())
        bonus.state, bonus.error = state, error
        logger.info("MTurk bonus %s of batch %s: %s", bonus.pk, bonus.batch_id, state)

    def bonus_sent(self, assignment, reason: str, token: str) -> bool:
        """Its pay call was sent (its mark is sent or paid: it may have paid), or MTurk lists the
        assignment's bonus paid with the form's reference in its Reason."""
        marked = MTurkBonus.objects.filter(token=token, state__in=[MTurkBonus.State.SENT, MTurkBonus.State.PAID])
        return marked.exists() or self.paid_at_mturk(assignment, reason, token)

    def paid_at_mturk(self, assignment, reason: str, token: str) -> bool:
        """MTurk lists the assignment's bonus paid with the form's reference in its Reason."""
        digest = hashlib.sha256(token.encode()).hexdigest()[:10]
        sandbox = config(assignment.hit.batch)["sandbox"]
        return f"{reason} (ref {digest})" in self._bonus_reasons(sandbox, assignment.external_id)

    def unsettled_spend(self, batch) -> Decimal:
        """Bonuses whose pay call was sent and whose answer was lost (they may have paid), and bonuses
        paid whose ledger row is missing until it is written (they were paid), with MTurk's fees:
        each counted here or by its ledger row, never both (the row is found by its key)."""
        return sum(
            (b.amount + self.fee(b.amount, batch.assignments_per_hit) for b in unsettled_marks(batch)),
            Decimal("0.00"),
        )

    def _bonus_reasons(self, sandbox: bool, assignment_id: str) -> set[str]:
        """The Reasons of the bonuses MTurk paid for an assignment (ListBonusPayments, page by page)."""
        reasons: set[str] = set()
        params: dict = {"AssignmentId": assignment_id, "MaxResults": 100}
        while True:
            page = call(self.client(sandbox), "list_bonus_payments", **params)
            reasons.update(p.get("Reason", "") for p in page.get("BonusPayments", []))
            if not page.get("NextToken") or not page.get("BonusPayments"):
                return reasons
            params["NextToken"] = page["NextToken"]

    def block(self, worker, reason: str) -> None:
        """Block the worker in each MTurk environment (sandbox, production) they worked in for us,
        recorded on the newest such batch of each (the sandbox, with no batch, when none): a worker
        of both was blocked only where their last batch ran."""
        newest: dict[bool, Batch | None] = {}
        for batch in Batch.objects.filter(hits__assignments__worker=worker).distinct().order_by("-created_at", "-pk"):
            newest.setdefault(config(batch)["sandbox"], batch)
        for sandbox, recorded_on in sorted(newest.items()) or [(True, None)]:
            self._call(
                recorded_on,
                sandbox,
                "create_worker_block",
                target=worker.external_id,
                WorkerId=worker.external_id,
                Reason=reason,
            )

    # ---- sync -------------------------------------------------------------------------
    def list_assignments(self, batch, hit_external_id: str):
        """Every Submitted, Approved or Rejected assignment of a HIT, page by page."""
        client = self.client(config(batch)["sandbox"])
        token = None
        while True:
            params = {
                "HITId": hit_external_id,
                "MaxResults": 100,
                "AssignmentStatuses": ["Submitted", "Approved", "Rejected"],
            }
            if token:
                params["NextToken"] = token
            page = call(client, "list_assignments_for_hit", **params)
            yield from page.get("Assignments", [])
            token = page.get("NextToken")
            if not token:
                return


# MTurk grades its own test against one fixed sheet of the pool (its AnswerKey cannot vary by worker).
ANSWER_KEY_SHEET = "mturk:answer-key"


def qualification_items(test) -> list[dict]:
    return [
        {
            "id": it["item"].pk,
            "summary": it["summary"].text,
            "acus": [(a.pk, a.text) for a in it["acus"]],
            "answers": it["item"].answers,
        }
        for it in test_items(test, sheet=draw(test, ANSWER_KEY_SHEET))
    ]


def batch_bucket_types(batch):
    buckets = list(batch.buckets.all())

    def type_for(acu_count: int) -> str:
        for b in buckets:
            if acu_count >= b.min_acus and (b.max_acus is None or acu_count <= b.max_acus):
                return b.external_type_id
        raise ProviderError(f"No pay bucket covers {acu_count} ACUs.")

    return type_for


def unsettled_marks(batch, marks=None) -> list[MTurkBonus]:
    """The batch's bonuses counted as spent and not (yet) by a ledger row: sent (they may have paid)
    or paid, whose row (found by its key, `bonus_key`) is not written. `marks`: a narrower queryset of
    the batch's bonuses (the lead's list of old ones). Reads only."""
    pending = list(
        (marks if marks is not None else batch.mturk_bonuses.all()).filter(
            recorded=False, state__in=[MTurkBonus.State.SENT, MTurkBonus.State.PAID]
        )
    )
    written = set(
        LedgerEntry.objects.filter(key__in=[bonus_key(b.token) for b in pending]).values_list("key", flat=True)
    )
    return [b for b in pending if bonus_key(b.token) not in written]
