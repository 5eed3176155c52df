"""Prolific provider: a batch becomes a Prolific study whose places are work sessions of K HITs.

Prolific API facts used (docs.prolific.com, as stored in the documentation corpus):
- Studies, https://docs.prolific.com/api-reference/studies: a draft is made with POST
  /api/v1/studies/ (name, internal_name, description, external_study_url carrying
  {{%PROLIFIC_PID%}}, {{%STUDY_ID%}}, {{%SESSION_ID%}}, prolific_id_option "url_parameters",
  completion_codes [{code, code_type "COMPLETED", actions [{action}]}], total_available_places,
  estimated_completion_time and maximum_allowed_time in minutes, reward in the minor unit of the
  account currency, device_compatibility, filters, project), and published as a second step with
  POST /api/v1/studies/{id}/transition/ {"action": "PUBLISH"} (also PAUSE, START, STOP); PATCH
  /api/v1/studies/{id}/ changes total_available_places. Participants return to
  https://app.prolific.com/submissions/complete?cc=CODE
  (https://docs.prolific.com/documentation/core-concepts/reviewing-submissions-and-rewards).
- Cost, https://docs.prolific.com/api-reference/studies/calculate-study-cost: {reward,
  total_available_places} -> {total_cost} in cents, VAT and fees included; the path
  /api/v1/study-cost-calculator/ is the one the prolific.api R package calls.
- Filters, https://docs.prolific.com/api-reference/filters: [{filter_id, selected_values}] or
  [{filter_id, selected_range: {lower, upper}}]: approval_rate, fluent-languages,
  participant_group_allowlist / participant_group_blocklist.
- Submissions, hooks and bonuses: see hits/providers/prolific/sync.py and decisions.py.
- Participant groups, https://docs.prolific.com/api-reference/participant-groups
  (/create-participant-group: name and workspace_id; /add-to-participant-group appends
  participant_ids, ignoring members already in).
- Minimum pay, https://researcher-help.prolific.com/hc/en-gb/articles/4407695146002 ("Prolific's
  payment principles"): at least £6.00 / $8.00 per hour; lower session rewards are refused here.

Assumptions (not settled by the documentation corpus): English is choice "19" of fluent-languages
(a batch setting; check GET /api/v1/filters/); a listed submission names its participant as
participant_id (or participant, as a single submission does); Prolific's service fee used for
estimates and the ledger is PROLIFIC_FEE_RATE (default 33.3%), the cost calculator's total
being shown as the authoritative figure.
"""

import logging
import math
import secrets
from decimal import Decimal

from django.conf import settings
from django.db.models import Exists, F, OuterRef
from django.urls import reverse

from hits.ledger import reward_key
from hits.models import Assignment, Batch, ProviderCall
from hits.money import cents, format_money, hourly_rate
from hits.provider_interface.base import Capability, CrowdProvider, ExtraCost, ProviderError, SessionPrice
from hits.providers.prolific import plans
from hits.providers.prolific.client import ProlificClient, ProlificError
from hits.providers.prolific.config import OPTIONS, config
from hits.providers.prolific.decisions import (
    ASSIGNMENT_KEY,
    check_rejection,
    mark_decision,
    outcome_unknown,
    paid_unrecorded,
    pay_bonus,
    pay_call_sent,
    split_feedback,
)
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.providers.prolific.plans import SessionPlan, allowed_minutes, opened_places, session_plan
from hits.providers.prolific.rewards import owed_rewards, session_fee

logger = logging.getLogger(__name__)

# Tests may replace this; the contract tests keep the real client and mock only the transport.
CLIENT_FACTORY = ProlificClient

COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
MIN_HOURLY_CENTS = {"USD": 800, "GBP": 600}
PUBLISHED = {"ACTIVE", "SCHEDULED", "PAUSED", "AWAITING REVIEW", "COMPLETED"}
# A transition: the status it leads to, and the statuses in which it has nothing left to do.
TRANSITIONS = {
    "PUBLISH": ("ACTIVE", PUBLISHED),
    "PAUSE": ("PAUSED", {"PAUSED", "AWAITING REVIEW", "COMPLETED"}),
    "START": ("ACTIVE", {"ACTIVE", "AWAITING REVIEW", "COMPLETED"}),
    "STOP": ("COMPLETED", {"AWAITING REVIEW", "COMPLETED"}),
}


def completion_url(code: str) -> str:
    return COMPLETION_URL.format(code=code)


def new_code() -> str:
    return "ACU" + secrets.token_hex(4).upper()


def public_url(path: str) -> str:
    base = getattr(settings, "PUBLIC_BASE_URL", "").rstrip("/")
    if not base.startswith("https://"):
        raise ProviderError("Set PUBLIC_BASE_URL to this site's https:// address: Prolific sends participants there.")
    return base + path + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def check_rate(reward_cents: int, minutes: int, currency: str, what: str = "A session") -> None:
    """Refuse a reward below Prolific's minimum hourly rate, saying what would meet it."""
    floor = MIN_HOURLY_CENTS.get(currency, MIN_HOURLY_CENTS["USD"])
    minutes = max(1, minutes)
    if reward_cents * 60 < floor * minutes:
        reward = Decimal(reward_cents) / 100
        needed = Decimal(math.ceil(floor * minutes / 60)) / 100
        raise ProviderError(
            f"{what} pays {format_money(reward, currency)} for about {minutes} minutes, "
            f"{format_money(hourly_rate(reward, minutes * 60), currency)}/hour: below Prolific's minimum of "
            f"{format_money(Decimal(floor) / 100, currency)}/hour. "
            f"Pay at least {format_money(needed, currency)} (raise the pay buckets) or plan fewer HITs per session."
        )


def filters(batch, allow_group: str = "", block_group: str = "") -> list[dict]:
    cfg = config(batch)
    result = [{"filter_id": "approval_rate", "selected_range": {"lower": int(cfg["min_approval_rate"]), "upper": 100}}]
    if cfg["languages"]:
        result.append({"filter_id": "fluent-languages", "selected_values": [str(v) for v in cfg["languages"]]})
    if allow_group:
        result.append({"filter_id": "participant_group_allowlist", "selected_values": [allow_group]})
    blocks = [
        g for g in (block_group, cfg["participant_group_id"] if cfg["participant_group_mode"] == "block" else "") if g
    ]
    if blocks:
        result.append({"filter_id": "participant_group_blocklist", "selected_values": blocks})
    return result


def study_payload(
    batch,
    study,
    *,
    path: str,
    places: int,
    minutes: int,
    reward_cents: int,
    action: str,
    study_filters: list[dict],
    name: str,
    description: str,
    suffix: str = "",
) -> dict:
    """A create-study body as Prolific documents it, for the main or the screening study."""
    cfg = config(batch)
    payload = {
        "name": name,
        "internal_name": f"acu-batch-{batch.pk}{suffix}",
        "description": description,
        "external_study_url": public_url(path),
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": action}]}
        ],
        "total_available_places": places,
        "estimated_completion_time": minutes,
        "maximum_allowed_time": allowed_minutes(batch, minutes),
        "reward": reward_cents,
        "device_compatibility": list(cfg["device_compatibility"]),
        "filters": study_filters,
    }
    if cfg["project_id"]:
        payload["project"] = cfg["project_id"]
    return payload


def main_payload(batch, study, plan: SessionPlan, allow_group: str) -> dict:
    return study_payload(
        batch,
        study,
        path=reverse("prolific_start", args=[batch.pk]),
        places=plan.places,
        minutes=plan.estimated_minutes,
        reward_cents=plan.reward_cents,
        action="MANUALLY_REVIEW",
        study_filters=filters(batch, allow_group=allow_group),
        name=batch.title,
        description=f"{batch.description} You will do {plan.hits_per_session} short tasks in a row, one summary each, "
        "with the keyboard or mouse, and return to Prolific automatically.",
    )


def screening_reward_cents(batch) -> int:
    """The screening pays the batch's target hourly rate (at least Prolific's minimum) for its minutes;
    a new batch's spec, the rate its draft will have (the field's default)."""
    cfg = config(batch)
    rate = batch.target_hourly_rate if isinstance(batch, Batch) else Batch._meta.get_field("target_hourly_rate").default
    target = max(int(Decimal(rate) * 100), MIN_HOURLY_CENTS.get(cfg["currency"], 800))
    return math.ceil(target * int(cfg["screening_minutes"]) / 60)


def screening_payload(batch, study, places: int) -> dict:
    cfg = config(batch)
    lead_group = cfg["participant_group_id"] if cfg["participant_group_mode"] == "allow" else ""
    # Those who passed already (the group) need not take it again.
    return study_payload(
        batch,
        study,
        path=reverse("prolific_screening", args=[batch.pk]),
        places=places,
        minutes=int(cfg["screening_minutes"]),
        reward_cents=study.reward_cents,
        action="AUTOMATICALLY_APPROVE",
        study_filters=filters(batch, allow_group=lead_group, block_group=study.participant_group_id),
        name=f"{batch.title}: short qualification test",
        suffix="-screening",
        description="Decide which facts a few short summaries state. Passing invites you to our paid ACU tasks.",
    )


class ProlificProvider(CrowdProvider):
    name = "prolific"
    label = "Prolific"
    bonus_commits_its_steps = True  # its pay call is not idempotent (decisions.pay_bonus)
    capabilities = frozenset(
        {Capability.EXTEND, Capability.SYNC, Capability.SESSIONS, Capability.WEBHOOKS, Capability.MORE_PLACES}
    )
    options = OPTIONS

    def __init__(self):
        self._client = None

    @property
    def client(self) -> ProlificClient:
        if self._client is None:
            self._client = CLIENT_FACTORY()
        return self._client

    def call(self, batch, action: str, target: str, fn: str, *args, **kwargs):
        """One client call, logged for the lead with its outcome."""
        try:
            result = getattr(self.client, fn)(*args, **kwargs)
        except ProviderError as exc:
            logger.warning(
                "Prolific %s %s for batch %s failed: %s", action, target[:200], getattr(batch, "pk", None), exc
            )
            ProviderCall.objects.create(batch=batch, action=action, target=target[:200], ok=False, error=str(exc))
            raise
        logger.info("Prolific %s %s for batch %s: ok", action, target[:200], getattr(batch, "pk", None))
        ProviderCall.objects.create(batch=batch, action=action, target=target[:200], ok=True)
        return result

    # ---- money ------------------------------------------------------------------------
    def fee(self, amount, assignments_per_hit: int) -> Decimal:
        rate = Decimal(getattr(settings, "PROLIFIC_FEE_RATE", "0.333"))
        return cents(Decimal(amount) * rate) if Decimal(amount) > 0 else Decimal("0.00")

    def reward_fee(self, assignment, amount) -> Decimal:
        """Prolific charges its fee on the submission it pays (the session's reward), not per HIT: the
        HIT's share of the fee on its session's rewards (`rewards.session_fee`)."""
        session = ProlificSession.objects.filter(
            batch_id=assignment.hit.batch_id, worker_id=assignment.worker_id, session_id=assignment.external_id
        ).first()
        if session is None:
            return super().reward_fee(assignment, amount)
        return session_fee(self, session, amount, reward_key(assignment.pk))

    def session_price(self, owner, rewards: dict, acus: int, places: int) -> SessionPrice:
        """Prolific pays each session's reward whole with its fee: priced by sessions (`plans.session_price`)."""
        return plans.session_price(self, owner, rewards, acus, places)

    def extra_costs(self, owner, sessions: SessionPrice | None = None) -> list[ExtraCost]:
        """A batch with a qualification test, or a new batch's spec naming one (the new batch form's live
        count), has a screening study, paid apart (`plans.screening_cost`)."""
        if not getattr(owner, "qualification_test_id", None):
            return []
        return [plans.screening_cost(self, owner, screening_reward_cents(owner), sessions)]

    def lock_for_review(self, assignment_id: int) -> None:
        """The session of the assignment, locked before it: the sync (`sync.apply_submission`) locks a
        session and then confirms or releases its assignments, while a decision on one of them writes
        the session's decision and reckons its fee under the session's lock (`mark_decision`,
        `rewards.session_fee`); taken in the other order, the two deadlocked."""
        of_assignment = Assignment.objects.filter(
            pk=assignment_id,
            hit__batch_id=OuterRef("batch_id"),
            worker_id=OuterRef("worker_id"),
            external_id=OuterRef("session_id"),
        )
        ProlificSession.objects.select_for_update().filter(Exists(of_assignment)).values_list("pk").first()

    def currency(self, batch) -> str:
        """The Prolific account's currency (the batch option): Prolific pays rewards and bonuses in it."""
        return config(batch)["currency"]

    def cost(self, batch) -> dict:
        """The session plan and Prolific's cost calculator total for it (and the screening)."""
        main = ProlificStudy.objects.filter(batch=batch, kind="main").first()
        plan = session_plan(batch, config(batch), main)
        result: dict = {"plan": plan, "total": None, "screening_total": None, "error": ""}
        try:
            check_rate(plan.reward_cents, plan.estimated_minutes, plan.currency)
        except ProviderError as exc:
            result["error"] = str(exc)
        try:
            answer = self.call(batch, "cost calculator", "main study", "study_cost", plan.reward_cents, plan.places)
            result["total"] = cents(Decimal(str(answer.get("total_cost", 0))) / 100)
            if batch.qualification_test_id:
                places = int(config(batch)["screening_places"] or plan.places)
                answer = self.call(
                    batch, "cost calculator", "screening", "study_cost", screening_reward_cents(batch), places
                )
                result["screening_total"] = cents(Decimal(str(answer.get("total_cost", 0))) / 100)
        except ProviderError as exc:
            result["error"] = result["error"] or f"Cost unavailable: {exc}"
        return result

    # ---- study life cycle -------------------------------------------------------------
    def _study(self, batch, kind: str):
        study, _ = ProlificStudy.objects.get_or_create(batch=batch, kind=kind, defaults={"completion_code": new_code()})
        return study

    def _create(self, batch, study, payload: dict) -> bool:
        """Create the draft once; returns True when it was created now."""
        if study.study_id:
            return False
        result = self.call(batch, "create draft study", study.get_kind_display(), "create_study", payload)
        study.study_id, study.status = result["id"], result.get("status") or "UNPUBLISHED"
        study.save(update_fields=["study_id", "status", "updated_at"])
        return True

    def _transition(self, batch, study, action: str) -> None:
        """Move a study; a refused repeat is fine when Prolific shows it already there."""
        target, done = TRANSITIONS[action]
        if study.status in done:
            return
        try:
            result = self.call(
                batch, f"{action.lower()} study", study.study_id, "transition_study", study.study_id, action
            )
            status = result.get("status") or ""
        except ProlificError as exc:
            if exc.status >= 500:
                raise
            status = self.call(batch, "read study", study.study_id, "get_study", study.study_id).get("status", "")
            if status not in done:
                raise
        study.status = status if status in done else target
        study.save(update_fields=["status", "updated_at"])

    def _screening(self, batch, places: int):
        """The screening study and its participant group (created once each)."""
        cfg = config(batch)
        study = self._study(batch, "screening")
        if not study.participant_group_id:
            if not cfg["workspace_id"]:
                raise ProviderError(
                    "A qualification test on Prolific needs the workspace id (batch settings): "
                    "passers join a participant group of that workspace."
                )
            group = self.call(
                batch,
                "create participant group",
                batch.name,
                "create_group",
                f"ACU batch {batch.pk} qualified",
                cfg["workspace_id"],
                f"Passed the qualification test of batch {batch.pk} ({batch.name}).",
            )
            study.participant_group_id = group["id"]
            study.save(update_fields=["participant_group_id", "updated_at"])
        if not study.study_id:
            study.reward_cents, study.places = screening_reward_cents(batch), places
            study.estimated_minutes = int(cfg["screening_minutes"])
            study.save(update_fields=["reward_cents", "places", "estimated_minutes", "updated_at"])
            check_rate(study.reward_cents, study.estimated_minutes, cfg["currency"], "The screening study")
            self._create(batch, study, screening_payload(batch, study, places))
        return study

    def create_draft(self, batch):
        """Draft(s) at Prolific with the current plan; refuses a reward below the minimum rate."""
        main = self._study(batch, "main")
        plan = session_plan(batch, config(batch), main)
        check_rate(plan.reward_cents, plan.estimated_minutes, plan.currency)
        allow = config(batch)["participant_group_id"] if config(batch)["participant_group_mode"] == "allow" else ""
        if batch.qualification_test_id:
            allow = self._screening(batch, int(config(batch)["screening_places"] or plan.places)).participant_group_id
        # Every HIT is priced alike so the ledger adds up to the session reward.
        batch.hits.exclude(reward=plan.per_hit_reward).update(reward=plan.per_hit_reward)
        if not main.study_id:
            main.hits_per_session, main.estimated_minutes = plan.hits_per_session, plan.estimated_minutes
            main.reward_cents, main.places, main.participant_group_id = plan.reward_cents, plan.places, allow
            main.save()
        created = self._create(batch, main, main_payload(batch, main, plan, allow))
        return main, plan, created

    def publish(self, batch) -> None:
        """Create (or resume) the drafts, bring a resumed draft up to date, then publish both."""
        main, plan, created = self.create_draft(batch)
        screening = batch.prolific_studies.filter(kind="screening").first()
        if screening is not None:
            self._transition(batch, screening, "PUBLISH")
        if not created and main.status not in PUBLISHED:
            status = self.call(batch, "read study", main.study_id, "get_study", main.study_id).get("status", "")
            if status == "UNPUBLISHED":  # the plan may have changed since the draft was made
                payload = main_payload(batch, main, plan, main.participant_group_id)
                fields = {
                    k: payload[k] for k in ("reward", "total_available_places", "estimated_completion_time", "filters")
                }
                self.call(batch, "update draft", main.study_id, "update_study", main.study_id, fields)
                main.reward_cents, main.places, main.estimated_minutes = (
                    plan.reward_cents,
                    plan.places,
                    plan.estimated_minutes,
                )
            main.status = status
            main.save(update_fields=["reward_cents", "places", "estimated_minutes", "status", "updated_at"])
        self._transition(batch, main, "PUBLISH")
        batch.hits.update(provider_places=F("max_assignments"))  # the study's places cover these

    def _each_study(self, batch, action: str) -> None:
        for study in batch.prolific_studies.exclude(study_id="").order_by("kind"):
            self._transition(batch, study, action)

    def stop(self, batch) -> None:
        self._each_study(batch, "STOP")

    def pause(self, batch) -> None:
        self._each_study(batch, "PAUSE")

    def resume(self, batch) -> None:
        self._each_study(batch, "START")

    def extend(self, batch, hours: float) -> None:
        """Prolific studies do not expire; extending reopens a paused study."""
        if batch.prolific_studies.filter(status="PAUSED").exists():
            self.resume(batch)

    def open_places(self, hit, total: int) -> int:
        """Capability.MORE_PLACES: a HIT's new places are taken by sessions within the study; the
        study's places (sessions of K HITs) are raised to cover every HIT's places when they no
        longer do, by an absolute total_available_places, so a retry opens nothing twice."""
        batch = hit.batch
        main = ProlificStudy.objects.filter(batch=batch, kind="main").exclude(study_id="").first()
        if main is None:
            return 0  # not published there yet: publishing plans the places
        needed = math.ceil(opened_places(batch) / max(1, main.hits_per_session))
        if needed > main.places:
            self.call(
                batch,
                "add places",
                f"{main.study_id}: {main.places} -> {needed} (adaptive)",
                "update_study",
                main.study_id,
                {"total_available_places": needed},
            )
            ProlificStudy.objects.filter(pk=main.pk).update(places=needed)
        type(hit).objects.filter(pk=hit.pk).update(provider_places=total)
        return total

    def add_places(self, batch, extra: int) -> int:
        main = ProlificStudy.objects.filter(batch=batch, kind="main").exclude(study_id="").first()
        if main is None:
            raise ProviderError("The study does not exist at Prolific yet; publish the batch first.")
        if not 1 <= extra <= 10_000:
            raise ProviderError("Add between 1 and 10,000 places.")
        total = main.places + extra  # an absolute value: a retried PATCH cannot add twice
        self.call(
            batch,
            "add places",
            f"{main.study_id}: {main.places} -> {total}",
            "update_study",
            main.study_id,
            {"total_available_places": total},
        )
        main.places = total
        main.save(update_fields=["places", "updated_at"])
        return total

    # ---- review (one assignment of a session) -----------------------------------------
    def _session(self, assignment):
        session = ProlificSession.objects.filter(
            batch_id=assignment.hit.batch_id, worker_id=assignment.worker_id, session_id=assignment.external_id
        ).first()
        if session is None:
            raise ProviderError(
                f"Assignment {assignment.pk} belongs to no Prolific session, so Prolific cannot act on it."
            )
        return session

    def approve(self, assignment) -> None:
        """Prolific approves whole submissions: approving one HIT approves its session, once."""
        session = self._session(assignment)
        if session.decision == "approved" or session.submission_status == "APPROVED":
            mark_decision(session, "approved")
            return
        self._reviewable(session, "approved")
        self.call(
            assignment.hit.batch,
            "approve submission",
            session.session_id,
            "transition_submission",
            session.session_id,
            "APPROVE",
        )
        mark_decision(session, "approved")

    def reject(self, assignment, feedback: str) -> None:
        """Rejects the whole session; "[CATEGORY] message" picks Prolific's category (else OTHER)."""
        session = self._session(assignment)
        if session.decision == "rejected" or session.submission_status == "REJECTED":
            mark_decision(session, "rejected")
            return
        self._reviewable(session, "rejected")
        category, message = split_feedback(feedback)
        check_rejection(category, message)
        self.call(
            assignment.hit.batch,
            "reject submission",
            session.session_id,
            "transition_submission",
            session.session_id,
            "REJECT",
            message=message,
            rejection_category=category,
        )
        mark_decision(session, "rejected")

    @staticmethod
    def _reviewable(session, decision: str) -> None:
        """Only a submission Prolific reported completed can be decided (no call is made otherwise)."""
        if session.decision and session.decision != decision:
            raise ProviderError(f"Prolific submission {session.session_id} was {session.decision} already.")
        if session.submission_status != "AWAITING REVIEW":
            raise ProviderError(
                f"Prolific has not reported submission {session.session_id} as completed "
                f"({session.submission_status or 'no report yet'}); sync first."
            )

    def send_bonus(self, assignment, amount, reason: str, token: str, by=None) -> None:
        session = self._session(assignment)
        pay_bonus(
            self,
            assignment.hit.batch,
            {session: cents(amount)},
            reason,
            key=f"{ASSIGNMENT_KEY}{token}",
            by=by,
            assignment=assignment,
        )

    def bonus_sent(self, assignment, reason: str, token: str) -> bool:
        return pay_call_sent(f"{ASSIGNMENT_KEY}{token}")

    def unsettled_spend(self, batch) -> Decimal:
        """Bonuses whose pay call was sent but whose answer was lost (they may have been paid), and
        bonuses paid whose ledger rows are missing until the sync writes them (they were paid)."""
        pending = outcome_unknown(self, batch) + paid_unrecorded(self, batch)
        return sum((cost for _, cost in pending), Decimal("0"))

    def owed_rewards(self, batch) -> tuple[int, Decimal]:
        """Its HITs submitted and still to approve, with what their sessions' approvals record: each
        HIT's reward and fee, and the rest of the session reward (hits/providers/prolific/rewards.py)."""
        return owed_rewards(self, batch)

    def block(self, worker, reason: str) -> None:
        """Prolific has no researcher-side block call: a blocked participant gets no further
        session here (and a lead may add them to a participant group used as a blocklist)."""
