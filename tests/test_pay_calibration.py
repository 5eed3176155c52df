"""The calibration table on the batch page: the hourly pay a bucket's HITs give, read from the
reward they pay, and the reward that meets the batch's target (hits/calibration.py)."""

from decimal import Decimal

import pytest

from hits.calibration import calibration
from hits.models import HIT, Assignment
from hits.money import hourly_rate, reward_for_rate

from .test_panel import open_panel, worked

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def timed_enough(monkeypatch):
    """For the tests of what a rate reads, not of how many times it needs: one timed HIT is enough."""
    monkeypatch.setattr("hits.calibration.MIN_TIMED_HITS", 1)


def test_a_batch_paid_per_session_shows_the_hourly_pay_of_the_price_it_pays(client, lead, timed_enough):
    """A panel paying per session prices every HIT alike (the mean of the buckets, rounded up);
    the calibration table showed each bucket's nominal reward and the $/hour it would give, not
    what the HITs pay: $0.15 for a 1-5 ACU HIT paid $0.35 read as a third of its real rate."""
    batch = open_panel(k=2, assignments=2, systems=("abs_bart_out", "ext_bart_out"))
    price = HIT.objects.filter(batch=batch).values_list("reward", flat=True).distinct().get()
    worked(batch, "P1")
    Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).update(active_seconds=60)
    rows = [row for row in calibration(batch) if row["measured"]]
    assert rows and any(row["bucket"].reward != price for row in rows)  # the case that was wrong
    for row in rows:
        assert row["reward"] == price
        assert row["hourly"] == hourly_rate(price, 60) == (price * 60).quantize(Decimal("0.01"))
        assert row["proposed"] == reward_for_rate(batch.target_hourly_rate, 60)
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/")
    assert page.status_code == 200
    assert [r["hourly"] for r in page.context["calibration"] if r["measured"]] == [r["hourly"] for r in rows]
    assert f"${price}" in page.content.decode()


def test_a_bucket_paying_its_own_reward_reads_as_before(timed_enough):
    batch = open_panel(k=2, assignments=2, pay_per="hit")
    worked(batch, "P1")
    Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).update(active_seconds=45)
    for row in calibration(batch):
        assert row["reward"] == row["bucket"].reward
        if row["measured"]:
            assert row["hourly"] == hourly_rate(row["bucket"].reward, 45)


def test_a_workers_hourly_rate_is_what_their_timed_work_paid_per_hour_of_it():
    """The workers table's rate per hour was the mean reward of all the worker's counted work (timed
    or not) times 3600 over their median seconds: a worker paid $0.15, $0.15 and $0.55 for 30, 30
    and 600 seconds (the rest of their work untimed) read $32.40/hour, where they earned $0.85 in
    660 seconds, $4.64/hour."""
    from hits.services.simulate import simulate_crowd
    from scoring.results.dashboard import workers_table
    from scoring.runs.services import compute_scores

    from .crowd_data import demo_dataset, published_batch

    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=2)
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=3)
    worker = Assignment.objects.filter(hit__batch=batch).order_by("worker_id").first().worker
    mine = list(Assignment.objects.filter(worker=worker).order_by("pk"))
    assert len(mine) >= 4
    Assignment.objects.filter(pk__in=[a.pk for a in mine[3:]]).update(active_seconds=None)  # not timed
    for a, reward, seconds in zip(mine, ("0.15", "0.15", "0.55"), (30, 30, 600), strict=False):
        HIT.objects.filter(pk=a.hit_id).update(reward=Decimal(reward))
        Assignment.objects.filter(pk=a.pk).update(active_seconds=seconds)
    run = compute_scores(dataset, None, trigger="test")
    row = next(r for r in workers_table(run)["rows"] if r["worker_id"] == worker.pk)
    assert row["median_seconds"] == 30
    assert round(row["hourly"], 2) == 4.64  # 0.85 * 3600 / 660


def test_a_workers_hourly_rate_leaves_out_work_not_paid_here():
    """An imported crowd round's HITs pay nothing here (the import writes reward 0.00; an expert
    round's HITs likewise): its timed work was added to the worker's hours at $0, so a worker who
    earned $X/hour on the crowd batch read less for every imported label they also had."""
    from datetime import timedelta

    from hits.models import Batch
    from hits.services import handout
    from hits.services.simulate import simulate_crowd
    from hits.services.submission import submit_assignment
    from scoring.results.dashboard import workers_table
    from scoring.runs.services import compute_scores

    from .crowd_data import all_answers, demo_dataset, published_batch

    dataset = demo_dataset()
    paid = published_batch(dataset, assignments=2)
    simulate_crowd(paid, workers=2, accuracy=0.9, seed=3)
    worker = Assignment.objects.filter(hit__batch=paid).order_by("worker_id").first().worker
    imported = published_batch(dataset, assignments=2)
    for _ in range(2):
        a = handout.next_assignment(worker, imported)
        submit_assignment(
            assignment_id=a.pk,
            worker_id=worker.pk,
            answers=all_answers(a),
            active_seconds=300,
            now=a.created_at + timedelta(minutes=10),
        )
    # as the import of labels exported from elsewhere writes them: no pay here
    Batch.objects.filter(pk=imported.pk).update(kind=Batch.Kind.IMPORTED_CROWD)
    HIT.objects.filter(batch=imported).update(reward=Decimal("0.00"))
    timed = Assignment.objects.filter(hit__batch=paid, worker=worker, active_seconds__gt=0)
    earned = sum(a.hit.reward for a in timed)
    seconds = sum(a.active_seconds for a in timed)
    run = compute_scores(dataset, None, trigger="test")
    row = next(r for r in workers_table(run)["rows"] if r["worker_id"] == worker.pk)
    assert row["hourly"] == float(hourly_rate(earned, seconds))


def test_the_workers_api_gives_a_workers_hourly_rate_as_money(client, lead):
    """docs/api.md: money is always a decimal string with two places. The workers API gave the
    rate per hour as a bare float (17.218647171673506), where the page showed $17.22."""
    from rest_framework.authtoken.models import Token

    from hits.services.simulate import simulate_crowd
    from scoring.results.dashboard import workers_table
    from scoring.runs.services import compute_scores

    from .crowd_data import demo_dataset, published_batch

    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=2)
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=3)
    run = compute_scores(dataset, batch, trigger="test")
    shown = {r["worker_id"]: r["shown"]["hourly"] for r in workers_table(run)["rows"]}
    token = Token.objects.get_or_create(user=lead)[0].key
    response = client.get(f"/api/datasets/{dataset.pk}/workers/?round={batch.pk}", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert rows and all(r["hourly"] is not None for r in rows)
    for r in rows:
        assert isinstance(r["hourly"], str) and Decimal(r["hourly"]) == Decimal(r["hourly"]).quantize(Decimal("0.01"))
        assert f"${r['hourly']}" == shown[r["worker_id"]]  # the page's figure


def test_the_pay_calibration_leaves_out_the_times_of_excluded_blocked_and_stopped_workers(timed_enough):
    """Spammers answer in a few seconds a HIT; the lead excludes or blocks them, or gold stops them
    at chance. Their times still entered the calibration and a Prolific session's minutes: here
    their 5-second HITs pulled the median from 120 s to 5 s, and with it the reward proposed to the
    honest workers. Their work stays paid; only the time estimate leaves it out."""
    from django.utils import timezone

    from hits.models import Worker, WorkerEstimate
    from hits.providers.prolific.plans import seconds_per_hit

    from .test_prolific_sessions import open_batch

    batch = open_batch(k=3, assignments=9)
    hits = list(batch.hits.order_by("pk"))[:5]
    excluded = Worker.objects.create(provider="prolific", external_id="EXCLUDED", excluded=True)
    blocked = Worker.objects.create(provider="prolific", external_id="BLOCKED", blocked_at=timezone.now())
    stopped = Worker.objects.create(provider="prolific", external_id="STOPPED")
    lifted = Worker.objects.create(provider="prolific", external_id="LIFTED")  # a stop the lead lifted
    for worker, lift in ((stopped, None), (lifted, timezone.now())):
        WorkerEstimate.objects.create(
            batch=batch,
            worker=worker,
            sensitivity=0.5,
            specificity=0.5,
            stopped_at=None if lift else timezone.now(),
            stop_lifted_at=lift,
        )
    for i, hit in enumerate(hits):
        honest = Worker.objects.create(provider="prolific", external_id=f"HONEST{i}")
        Assignment.objects.create(hit=hit, worker=honest, status="approved", active_seconds=120)
        Assignment.objects.create(hit=hit, worker=lifted, status="approved", active_seconds=120)
        for spammer in (excluded, blocked, stopped):
            Assignment.objects.create(hit=hit, worker=spammer, status="approved", active_seconds=5)
    rows = [row for row in calibration(batch) if row["measured"]]
    assert sum(row["measured"] for row in rows) == 10  # the honest workers' and the lifted stop's
    for row in rows:
        assert row["median_seconds"] == 120
        assert row["proposed"] == reward_for_rate(batch.target_hourly_rate, 120)
    assert seconds_per_hit(batch) == 120.0


def test_the_proposed_reward_pays_the_target_an_hour_over_skewed_times():
    """A worker paid per HIT earns the reward over the *mean* time a HIT takes. Times are
    right-skewed: with most HITs at 40 s and a fifth at 200 s, a reward set from the median (40 s)
    paid $12/h on paper and about half of it ($6.30/h) for the work as done; the proposed reward now pays the target
    for the work as measured."""
    from hits.services.simulate import simulate_crowd

    from .crowd_data import demo_dataset, published_batch

    batch = published_batch(demo_dataset(), assignments=3)
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=3)
    done = Assignment.objects.filter(hit__batch=batch, status__in=["submitted", "approved"]).select_related("hit")
    seconds = {a.pk: 200 if i % 5 == 0 else 40 for i, a in enumerate(done.order_by("pk"))}
    for pk, s in seconds.items():
        Assignment.objects.filter(pk=pk).update(active_seconds=s)
    rows = [r for r in calibration(batch) if r["measured"] >= 5]
    assert rows
    for row in rows:
        times = [seconds[a.pk] for a in done if row["bucket"].holds(a.hit.acu_count)]
        assert row["median_seconds"] == 40 and row["mean_seconds"] > 40  # skewed, as work times are
        earned_per_hour = row["proposed"] * len(times) * 3600 / Decimal(sum(times))
        assert earned_per_hour >= batch.target_hourly_rate  # the old (median) reward: far below it
        assert row["hourly"] == hourly_rate(row["reward"], sum(times) / len(times))
