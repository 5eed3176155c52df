"""A pay bucket's rate and proposed reward rest on at least MIN_TIMED_HITS timed HITs: demo batch 3
proposed $0.01 from a single 2-second HIT, reading "$450.00/hour", with no warning; a Prolific
session's minutes likewise rest on as many timed HITs, or say they are a first guess."""

import pytest

from hits.calibration import MIN_TIMED_HITS, calibration
from hits.models import Assignment, Worker
from hits.money import reward_for_rate
from hits.providers.prolific.config import config
from hits.providers.prolific.plans import session_plan

from .test_prolific_sessions import open_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def timed(batch, seconds: list[int]):
    """One approved assignment a worker on the batch's first HIT per time, all in its bucket."""
    hit = batch.hits.order_by("pk").first()
    for i, s in enumerate(seconds):
        worker = Worker.objects.create(provider="prolific", external_id=f"TIMED{i}")
        Assignment.objects.create(hit=hit, worker=worker, status="approved", active_seconds=s)
    return hit


def row_of(batch, hit):
    return next(row for row in calibration(batch) if row["bucket"].holds(hit.acu_count))


def test_one_timed_hit_proposes_no_reward_and_says_why(client, lead):
    batch = open_batch(k=3, assignments=9)
    hit = timed(batch, [2])
    row = row_of(batch, hit)
    assert row["measured"] == 1 and row["mean_seconds"] == 2  # the measurement is still shown
    assert row["proposed"] is None and row["hourly"] is None  # was $0.01 and $450.00/hour
    assert row["too_few"] == f"too few timed HITs: 1 of at least {MIN_TIMED_HITS}"
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert f"too few timed HITs: 1 of at least {MIN_TIMED_HITS}" in page
    assert "$450.00" not in page


def test_enough_timed_hits_propose_a_reward_and_say_on_how_many(client, lead):
    batch = open_batch(k=3, assignments=9)
    hit = timed(batch, [120] * MIN_TIMED_HITS)
    row = row_of(batch, hit)
    assert row["too_few"] is None
    assert row["proposed"] == reward_for_rate(batch.target_hourly_rate, 120)
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert f"from {MIN_TIMED_HITS} timed HITs" in page


def test_a_prolific_session_does_not_rest_on_too_few_timed_hits_and_says_so(client, lead):
    """The plan took the mean once five HITs were timed, and the panel did not say whether its
    seconds a HIT were measured or guessed."""
    batch = open_batch(k=3, assignments=9, study=False)
    timed(batch, [2] * 5)
    plan = session_plan(batch, config(batch))
    assert plan.timed == 5
    assert plan.seconds_per_hit > 30  # the first guess (30 s + 6 s per ACU), not the 2 s mean
    assert f"too few timed HITs: 5 of at least {MIN_TIMED_HITS}" in plan.time_basis
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert plan.time_basis in page


def test_a_prolific_session_rests_on_enough_timed_hits():
    batch = open_batch(k=3, assignments=9, study=False)
    timed(batch, [90] * MIN_TIMED_HITS)
    plan = session_plan(batch, config(batch))
    assert plan.seconds_per_hit == 90 and plan.time_basis == f"the mean of {MIN_TIMED_HITS} timed HITs"
