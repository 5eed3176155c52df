"""Prolific work sessions: K HITs per session, never the same HIT twice for a participant
(across sessions too), abandoned sessions give their HITs back, and HITs are never over-filled."""

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, Worker
from hits.provider_interface import ProviderError
from hits.providers.prolific import sessions as prolific_sessions
from hits.providers.prolific.config import config
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.providers.prolific.plans import seconds_per_hit, session_plan
from hits.providers.prolific.provider import check_rate
from hits.providers.prolific.sessions import SessionRefused, start_session
from hits.services import batches

from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


def open_batch(k=3, assignments=3, systems=("abs_bart_out",), study_id="STUDY1", study=True, **config_):
    """A Prolific batch as if published (the study exists at Prolific), without any HTTP."""
    dataset = demo_dataset()
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(
            provider="prolific", assignments=assignments, provider_config={"hits_per_session": k, **config_}
        ),
        systems=list(dataset.systems.filter(name__in=systems)),
    )
    if study:
        ProlificStudy.objects.create(
            batch=batch,
            kind="main",
            study_id=study_id,
            status="ACTIVE",
            completion_code="DONE42",
            hits_per_session=k,
            places=10,
        )
    Batch.objects.filter(pk=batch.pk).update(
        status=Batch.Status.PUBLISHED, published_at=timezone.now(), expires_at=timezone.now() + timedelta(days=7)
    )
    batch.refresh_from_db()
    return batch


def arrive(batch, pid, session_id, study_id="STUDY1"):
    return start_session(batch=batch, participant_id=pid, study_id=study_id, session_id=session_id)


def test_a_session_holds_k_distinct_hits_tied_to_the_submission():
    batch = open_batch(k=3)
    session = arrive(batch, "PID1", "5e5500000000000000000001")
    assignments = list(session.assignments())
    assert session.size == 3 and len(assignments) == 3
    assert len({a.hit_id for a in assignments}) == 3
    assert {a.external_id for a in assignments} == {"5e5500000000000000000001"}
    assert all(not a.confirmed and a.deadline == session.deadline for a in assignments)
    assert session.worker.provider == Worker.Provider.PROLIFIC and session.worker.external_id == "PID1"


def test_the_same_participant_never_gets_a_hit_twice_across_sessions():
    batch = open_batch(k=3)
    seen = set()
    for n in range(3):
        session = arrive(batch, "PID1", f"5e55{n:020d}")
        hits = set(session.assignments().values_list("hit_id", flat=True))
        assert not hits & seen
        seen |= hits
        # Answer nothing, give up: the HITs go back to the pool, but not to this participant.
        prolific_sessions.release(session)
    third_plus = arrive(batch, "PID1", "5e5500000000000000000009")  # 10 HITs: one left for this participant
    assert third_plus.size == 1 and not set(third_plus.assignments().values_list("hit_id", flat=True)) & seen
    with pytest.raises(SessionRefused, match="No task is left for you"):
        arrive(batch, "PID1", "5e5500000000000000000010")
    assert not ProlificSession.objects.filter(session_id="5e5500000000000000000010").exists()  # nothing half-made


def test_resuming_and_refusals():
    batch = open_batch(k=2)
    first = arrive(batch, "PID1", "5e5500000000000000000001")
    assert arrive(batch, "PID1", "5e5500000000000000000001").pk == first.pk  # a reload resumes
    assert Assignment.objects.filter(external_id="5e5500000000000000000001").count() == 2
    with pytest.raises(SessionRefused, match="another participant"):
        arrive(batch, "PID2", "5e5500000000000000000001")
    with pytest.raises(SessionRefused, match="another Prolific study"):
        arrive(batch, "PID3", "5e5500000000000000000003", study_id="OTHER")
    with pytest.raises(SessionRefused, match="did not pass"):
        arrive(batch, "", "5e5500000000000000000004")
    Worker.objects.filter(external_id="PID1").update(blocked_at=timezone.now())
    with pytest.raises(SessionRefused, match="cannot take"):
        arrive(batch, "PID1", "5e5500000000000000000005")
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.STOPPED)
    batch.refresh_from_db()
    with pytest.raises(SessionRefused, match="closed"):
        arrive(batch, "PID6", "5e5500000000000000000006")
    assert (
        arrive(batch, "PID1", "5e5500000000000000000001").pk == first.pk
    )  # a stopped batch still resumes open sessions


def test_abandoned_sessions_release_their_hits_and_places_reopen():
    batch = open_batch(k=3, assignments=1)  # 10 HITs, one place each
    sessions = [arrive(batch, f"PID{i}", f"5e55{i:020d}") for i in range(3)]
    last = arrive(batch, "PID3", "5e5500000000000000000003")
    assert last.size == 1  # 3 + 3 + 3 + 1 = all ten places
    with pytest.raises(SessionRefused, match="No task is left"):
        arrive(batch, "PID4", "5e5500000000000000000004")
    # The first session answered one HIT, then its time ran out.
    first = sessions[0]
    answered = first.assignments().order_by("pk").first()
    Assignment.objects.filter(pk=answered.pk).update(status=Assignment.Status.SUBMITTED)
    overdue = max(s.deadline for s in [*sessions, last]) + timedelta(seconds=1)
    assert prolific_sessions.release_abandoned(now=overdue) == 2 + 3 + 3 + 1  # every unanswered HIT comes back
    first.refresh_from_db()
    assert first.status == ProlificSession.Status.ABANDONED
    assert first.assignments().filter(status=Assignment.Status.SUBMITTED).count() == 1
    fresh = arrive(batch, "PID4", "7477ccc24ceea11997a41389")
    assert fresh.size == 3 and answered.hit_id not in set(fresh.assignments().values_list("hit_id", flat=True))


def test_finishing_a_session():
    batch = open_batch(k=2)
    session = arrive(batch, "PID1", "5e5500000000000000000001")
    assert not prolific_sessions.finish_if_done(session)
    assert prolific_sessions.progress(session) == (0, 2)
    session.assignments().update(status=Assignment.Status.SUBMITTED)
    assert prolific_sessions.next_assignment(session) is None
    assert prolific_sessions.finish_if_done(session)
    assert ProlificSession.objects.get(pk=session.pk).status == ProlificSession.Status.COMPLETED


def test_session_tokens_are_signed():
    batch = open_batch(k=1)
    session = arrive(batch, "PID1", "5e5500000000000000000001")
    token = prolific_sessions.session_token(session)
    assert prolific_sessions.read_session_token(token).pk == session.pk
    with pytest.raises(SessionRefused):
        prolific_sessions.read_session_token(token[:-2] + "xx")


def test_plan_follows_hits_assignments_and_session_minutes():
    batch = open_batch(k=None, study=False, session_minutes=6)
    cfg = config(batch)
    plan = session_plan(batch, cfg)
    hits = batch.hits.count()
    per_hit = seconds_per_hit(batch)
    assert plan.hits_per_session == max(1, min(round(6 * 60 / per_hit), hits))
    assert plan.places == -(-hits * 3 // plan.hits_per_session)
    assert plan.reward_cents == int(plan.per_hit_reward * 100) * plan.hits_per_session
    rewards = list(batch.hits.values_list("reward", flat=True))
    assert plan.per_hit_reward == (sum(rewards) / len(rewards)).quantize(Decimal("0.01"), rounding="ROUND_CEILING")
    assert session_plan(batch, {**cfg, "hits_per_session": 500}).hits_per_session == hits  # never more than the HITs


def test_minimum_hourly_rate():
    check_rate(800, 60, "USD")
    check_rate(600, 60, "GBP")
    with pytest.raises(
        ProviderError,
        match=r"pays \$7\.99 for about 60 minutes, \$7\.99/hour: below Prolific's minimum of \$8\.00/hour.*at least \$8\.00 ",
    ):
        check_rate(799, 60, "USD")
    with pytest.raises(ProviderError, match="£3.00/hour: below Prolific's minimum of £6.00/hour"):
        check_rate(50, 10, "GBP")


@pytest.mark.portable
def test_the_minimum_rate_message_reads_the_rate_as_money_as_every_rate():
    """7 cents for 40 minutes is 10.5 cents an hour: the message formatted the float 0.105 with
    `:.2f` ("0.10 USD/hour", the float lies just below the half cent), where the session panel and
    every rate round half up through hits.money ($0.11)."""
    from hits.money import format_money, hourly_rate

    with pytest.raises(ProviderError) as refused:
        check_rate(7, 40, "USD")
    rate = format_money(hourly_rate(Decimal("0.07"), 40 * 60))
    assert rate == "$0.11"
    assert f"pays $0.07 for about 40 minutes, {rate}/hour" in str(refused.value)


@pytest.mark.django_db(transaction=True)
def test_concurrent_sessions_never_overfill_and_never_deadlock():
    batch = open_batch(k=3, assignments=1)  # ten places in all
    barrier = threading.Barrier(8)
    sizes, refusals, errors = [], [], []

    def go(i):
        try:
            barrier.wait()
            sizes.append(arrive(batch, f"PID{i}", f"5e55{i:020d}").size)
        except SessionRefused:
            refusals.append(i)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sum(sizes) == 10  # every place handed out once, none twice
    for hit in batch.hits.all():
        assert hit.assignments.filter(status__in=Assignment.ACTIVE).count() <= 1


def test_the_session_time_and_the_calibration_read_the_same_measured_work(monkeypatch):
    """The study's minutes (what Prolific shows participants and checks its minimum hourly rate
    against) came from the median of every timed assignment of the batch, whatever its status: a
    spammer's rejected 3-second submissions, a returned session's answered HITs (expired) and
    unconfirmed made-up sessions pulled it down, so the session read as better paid than it is,
    and disagreed with the batch page's calibration (submitted or approved, confirmed work only)."""
    from hits.calibration import calibration

    monkeypatch.setattr("hits.calibration.MIN_TIMED_HITS", 5)  # what is measured, not how much of it
    batch = open_batch(k=3, assignments=9)
    hits = list(batch.hits.order_by("pk"))
    spam = [("rejected", True), ("expired", True), ("submitted", False)]
    for i, hit in enumerate(hits[:5]):
        worker = Worker.objects.create(provider="prolific", external_id=f"REAL{i}")
        Assignment.objects.create(hit=hit, worker=worker, status="approved", active_seconds=120)
        for j, (status, confirmed) in enumerate(spam):
            spammer = Worker.objects.create(provider="prolific", external_id=f"SPAM{i}{j}")
            Assignment.objects.create(
                hit=hit, worker=spammer, status=status, confirmed=confirmed, active_seconds=3, external_id="x"
            )
    assert seconds_per_hit(batch) == 120.0
    medians = {row["median_seconds"] for row in calibration(batch) if row["measured"]}
    assert medians == {120.0}
    plan = session_plan(batch, config(batch))
    assert plan.estimated_minutes == 6  # 3 HITs x 2 minutes


def test_a_sessions_hourly_pay_rounds_half_up_to_the_cent_as_every_rate():
    """$2.45 for 24 minutes is $6.125 an hour: the Prolific panel read $6.12 (Decimal's default
    half-even), where the calibration table and every amount round half up ($6.13)."""
    from hits.money import hourly_rate
    from hits.providers.prolific.plans import SessionPlan

    plan = SessionPlan(
        hits_per_session=7,
        seconds_per_hit=200.0,
        estimated_minutes=24,
        per_hit_reward=Decimal("0.35"),
        reward_cents=245,
        places=3,
        currency="USD",
    )
    assert plan.hourly == Decimal("6.13") == hourly_rate(plan.reward, 24 * 60)


@pytest.mark.portable
def test_a_sessions_estimated_minutes_are_not_below_the_median_time_of_k_hits(monkeypatch):
    """Times per HIT are right-skewed; a session of K HITs takes their sum, whose median is near K
    times the mean. The plan estimated K times the median HIT (4 x 70 s, 5 minutes) where the
    median of every possible session of 4 of these HITs is 390 s: sessions ran longer than
    estimated and paid less an hour than advertised (Prolific judges pay by the median time)."""
    from itertools import product
    from statistics import median

    from hits.money import hourly_rate

    times = [40, 50, 60, 70, 90, 150, 240]
    monkeypatch.setattr("hits.calibration.MIN_TIMED_HITS", len(times))  # the estimate, not its minimum
    batch = open_batch(k=4, assignments=9, study=False)
    for i, (hit, seconds) in enumerate(zip(batch.hits.order_by("pk"), times, strict=False)):
        worker = Worker.objects.create(provider="prolific", external_id=f"TIMED{i}")
        Assignment.objects.create(hit=hit, worker=worker, status="approved", active_seconds=seconds)
    plan = session_plan(batch, config(batch))
    assert plan.hits_per_session == 4
    # Every session of 4 HITs drawn from the measured times (with replacement), exactly.
    session_median = median(sum(draw) for draw in product(times, repeat=4))
    assert session_median == 390
    assert plan.hits_per_session * plan.seconds_per_hit >= session_median
    assert plan.estimated_minutes * 60 >= session_median
    assert plan.hourly <= hourly_rate(plan.reward, session_median)  # never advertised above what it pays
