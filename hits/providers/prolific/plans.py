"""Planning a Prolific study: K HITs per session (a place), its minutes, reward and places."""

import math
from dataclasses import dataclass
from decimal import Decimal
from statistics import fmean

from django.db.models import Avg, Sum

from hits.calibration import too_few_timed
from hits.models import Batch
from hits.money import cents, hourly_rate
from hits.provider_interface.base import ExtraCost, SessionPrice, alike_price, alike_price_of
from hits.providers.prolific.config import config
from hits.providers.prolific.models import ProlificStudy
from hits.selectors import timed_assignments


@dataclass
class SessionPlan:
    hits_per_session: int
    seconds_per_hit: float
    estimated_minutes: int
    per_hit_reward: Decimal
    reward_cents: int
    places: int
    currency: str
    timed: int = 0  # the timed HITs seconds_per_hit rests on (fewer than MIN_TIMED_HITS: a first guess)
    target_hourly: Decimal | None = None  # the batch's target rate (its calibration's)

    @property
    def time_basis(self) -> str:
        """On what the time a HIT takes rests, for the panel: the timed HITs, or why not."""
        too_few = too_few_timed(self.timed)
        if too_few:
            return f"a first guess, 30 s + 6 s per ACU ({too_few})"
        return f"the mean of {self.timed} timed HITs"

    @property
    def guessed(self) -> bool:
        """The time a HIT takes is the first guess (too few timed HITs), not a measurement."""
        return too_few_timed(self.timed) is not None

    @property
    def below_target(self) -> bool:
        """A session pays less an hour than the batch's target rate: the rate Prolific shows the
        participants (from the minutes sent as the study's estimated completion time; a first guess
        until MIN_TIMED_HITS HITs are timed, never the mean of fewer) below the one the batch aims at."""
        hourly = self.hourly
        return self.target_hourly is not None and hourly is not None and hourly < self.target_hourly

    @property
    def reward(self) -> Decimal:
        return Decimal(self.reward_cents) / 100

    @property
    def hourly(self) -> Decimal | None:
        """What a session pays per hour of its estimated minutes, rounded as every rate (hits.money.hourly_rate)."""
        return hourly_rate(self.reward, self.estimated_minutes * 60)


def seconds_per_hit(batch) -> float:
    """The time a session allows for each of its HITs: a session of K HITs is estimated at K times
    this. The mean measured active time (`timed_assignments`, as the calibration table) once
    MIN_TIMED_HITS HITs were timed, else 30 s plus 6 s per ACU.

    The mean, not the median: times per HIT are right-skewed (many quick HITs, a few slow ones),
    and a session's time is the sum of K of them, whose median lies near K times the mean (closer
    as K grows), above K times the median. Prolific judges a study's pay by its participants'
    median completion time, so K x the median made sessions run longer than estimated and paid
    less an hour than advertised; for such skewed times K x the mean is at or above the median of
    K such sums (and, for K = 1, at or above the median HIT)."""
    return _time_per_hit(batch)[0]


def _time_per_hit(batch) -> tuple[float, int]:
    """seconds_per_hit and the number of timed HITs it looked at."""
    measured = [float(s) for s in timed_assignments(batch).values_list("active_seconds", flat=True) if s is not None]
    if not too_few_timed(len(measured)):  # as the calibration table: MIN_TIMED_HITS at least
        return fmean(measured), len(measured)
    return first_guess(batch.hits.aggregate(n=Avg("acu_count"))["n"] or 10), len(measured)


def first_guess(mean_acus: float) -> float:
    """The seconds a HIT is guessed to take before MIN_TIMED_HITS HITs are timed: 30 s + 6 s per ACU."""
    return 30.0 + 6.0 * float(mean_acus)


def _hits_per_session(cfg: dict, study: ProlificStudy | None, seconds: float, hit_count: int) -> int:
    """K: the one frozen on the draft once it exists, else the batch option, else the session's
    minutes over the time a HIT takes; never more than the batch's HITs (more would need a HIT twice)."""
    if study is not None and study.study_id:
        k = study.hits_per_session
    elif cfg.get("hits_per_session"):
        k = int(cfg["hits_per_session"])
    else:
        k = round(float(cfg["session_minutes"]) * 60 / seconds)
    return max(1, min(k, hit_count or 1))


def session_plan(batch, cfg: dict, study: ProlificStudy | None = None) -> SessionPlan:
    """K HITs per session, its minutes and reward, and the places: the HITs' places / K (HITs x
    assignments per HIT; an adaptive batch's places opened so far).

    Prolific pays one reward per place, so every HIT of the batch is priced alike: the mean of
    its rewards, rounded up to the cent; a session pays K times that. Once the draft exists, K
    is the one frozen on it (its places were computed from it)."""
    hit_count = batch.hits.count()
    seconds, timed = _time_per_hit(batch)
    k = _hits_per_session(cfg, study, seconds, hit_count)
    per_hit = alike_price(batch.hits)
    return SessionPlan(
        hits_per_session=k,
        seconds_per_hit=seconds,
        estimated_minutes=max(1, math.ceil(k * seconds / 60)),
        per_hit_reward=per_hit,
        reward_cents=int(per_hit * k * 100),
        places=math.ceil(opened_places(batch) / k),
        currency=cfg["currency"],
        timed=timed,
        target_hourly=Decimal(batch.target_hourly_rate),
    )


def session_price(provider, owner, rewards: dict, acus: int, places: int) -> SessionPrice:
    """`ProlificProvider.session_price`: what approving every session of the batch records when its
    HITs' `places` (their most) are all done. Each session is paid the study's reward whole with
    Prolific's fee on it (`rewards.rest_of_session`, `rewards.session_fee`), so the batch costs its
    sessions x (reward + fee(reward)): the places over K rounded up (a last, shorter session is paid
    whole), at least the places a published study has (`add_places`). A batch (`owner`) is priced by
    its `session_plan`, as publishing sends it; a new batch's spec by the same rule on its plan's HITs
    (`rewards` {reward: HITs}, carrying `acus` ACUs), none of them timed yet."""
    cfg = config(owner)
    if isinstance(owner, Batch):
        study = ProlificStudy.objects.filter(batch=owner, kind="main").first()
        plan = session_plan(owner, cfg, study)
        k, reward = plan.hits_per_session, plan.reward
        least = study.places if study is not None and study.study_id else 0
    else:
        hit_count = sum(rewards.values())
        k = _hits_per_session(cfg, None, first_guess(acus / hit_count if hit_count else 10), hit_count)
        reward, least = alike_price_of(rewards) * k, 0
    sessions = max(math.ceil(places / k), least)
    per_hit = owner.assignments_per_hit if isinstance(owner, Batch) else owner.assignments
    return SessionPrice(sessions, k, reward, provider.fee(reward, per_hit))


SCREENING = "Screening study (qualification test)"


def screening_cost(provider, owner, reward_cents: int, sessions: SessionPrice | None = None) -> ExtraCost:
    """The screening study of a batch with a qualification test, at most: its places x (its reward +
    Prolific's fee on it), as the sync records each screening submission Prolific approved (it approves
    every one automatically: `sync.record_screening_pay`); a place not taken, or taken and returned and
    never taken again, is not paid. Once the study exists at Prolific, its places and reward; before,
    what creating it sends: the `screening_places` option, else the main study's places, and
    `reward_cents` (`provider.screening_reward_cents`: the target hourly rate for its minutes). A new
    batch's spec (`owner`; the new batch form's live count) by the same rule, its main study's places
    the `sessions` its estimate priced (what the draft's `session_plan` gives)."""
    cfg = config(owner)
    if not isinstance(owner, Batch):
        places = int(cfg["screening_places"] or (sessions.sessions if sessions is not None else 0))
        return _screening_line(provider, places, reward_cents, owner.assignments)
    study = ProlificStudy.objects.filter(batch=owner, kind="screening").exclude(study_id="").first()
    if study is not None:
        places, reward_cents = study.places, study.reward_cents
    else:
        main = ProlificStudy.objects.filter(batch=owner, kind="main").first()
        places = int(cfg["screening_places"] or session_plan(owner, cfg, main).places)
    return _screening_line(provider, places, reward_cents, owner.assignments_per_hit)


def _screening_line(provider, places: int, reward_cents: int, assignments_per_hit: int) -> ExtraCost:
    reward = cents(Decimal(reward_cents) / 100)
    return ExtraCost(
        SCREENING,
        places,
        reward,
        provider.fee(reward, assignments_per_hit),
        note="Prolific approves and pays each screening submission automatically; a place not taken is not paid",
    )


def opened_places(batch) -> int:
    """The places of the batch's HITs (adaptive allocation opens more as it goes)."""
    return int(batch.hits.aggregate(n=Sum("max_assignments"))["n"] or 0)


def allowed_minutes(batch, estimated_minutes: int) -> int:
    """How long a place may take: the batch's assignment duration, and at least twice the
    estimate. Sent to Prolific as maximum_allowed_time and used as the session deadline, so
    both sides let a participant go at the same moment."""
    return max(2 * estimated_minutes, math.ceil(batch.assignment_duration_seconds / 60))
