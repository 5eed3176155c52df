"""An adaptive batch sets its summary-level threshold from its own pilot (issue 43)."""

import html
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from django.urls import reverse

from hits.allocation.policy import (
    ADAPTIVE,
    FIXED,
    PILOT_MIN,
    PILOT_QUANTILE,
    Policy,
    hit_policy,
    hit_settled,
    pair_posteriors,
    pilot_max_sd,
    pilot_size,
    share_sd,
    wants_place,
)
from hits.allocation.service import PILOT_QUORUM, pilot_threshold, policy_for
from hits.models import HIT, Judgment
from hits.services import handout
from hits.services.submission import submit_assignment

from .crowd_data import all_answers
from .test_allocation import CROWDS, adaptive_batch, allocation_bench, bench_data, no_refit, replay  # noqa: F401
from .test_handout import make_workers


def test_the_pilot_is_a_25th_of_the_batch_at_least_ten_hits_and_small_batches_have_none():
    assert pilot_size(3 * PILOT_MIN - 1) == 0  # too small: the pilot would be a third of it
    assert pilot_size(3 * PILOT_MIN) == PILOT_MIN
    assert pilot_size(40) == 10 and pilot_size(250) == 10 and pilot_size(251) == 11
    assert pilot_size(1250) == 50  # the bench's batch: its first wave of 25


def test_hit_policy_gives_the_pilot_fixed_places_and_the_others_the_pilots_threshold():
    shipped = Policy(ADAPTIVE, 2, 5, 0.9)
    pilot = hit_policy(shipped, 3, None, piloting=True)
    assert (pilot.min_places, pilot.max_places, pilot.max_sd) == (3, 3, None)
    assert wants_place(pilot, 2, True) and not wants_place(pilot, 3, False)  # 3 places, settled or not
    assert hit_policy(shipped, 7, None, piloting=True).max_places == 5  # never past the batch's maximum
    after = hit_policy(shipped, 3, 0.07, piloting=False)
    assert (after.min_places, after.max_places, after.max_sd) == (2, 5, 0.07)
    assert hit_policy(shipped, 3, None, piloting=False) == shipped  # no pilot: the per-ACU rule
    lead = Policy(ADAPTIVE, 2, 5, 0.9, max_sd=0.1)
    assert hit_policy(lead, 3, 0.07, piloting=True) == lead  # the lead's own threshold wins
    assert hit_policy(Policy(FIXED), 3, 0.07, piloting=False) == Policy(FIXED)


def test_the_benchs_app_runs_the_apps_pilot(realsumm_path):
    systems, docs, labels = bench_data(realsumm_path)  # 120 summaries: a pilot of 10, in the first two waves
    spec = allocation_bench.read_spec(CROWDS / "present.json")
    crowd = allocation_bench.simulate_crowd(spec, docs, labels, np.random.default_rng(3))
    run = allocation_bench.run_policy(crowd, "app")
    places = run.taken.sum(axis=1)
    first = np.arange(len(places)) < pilot_size(len(places))
    assert first.sum() == 10 and (places[first | crowd.gold] == 3).all()  # the pilot and gold: fixed places
    assert run.max_sd is not None and 0 < run.max_sd < 0.5  # set by the pilot's posteriors
    later = places[~first & ~crowd.gold]
    assert later.min() == 2 and later.max() <= 5 and (later > 2).any()  # only where its threshold asks


def submit(worker, batch, answer):
    """One place of the batch for this worker; `answer(hit, j)` says absent on the HIT's first ACUs
    (how many) at its j-th submitted place."""
    assignment = handout.next_assignment(worker, batch)
    hit = HIT.objects.get(pk=assignment.hit_id)
    answers = all_answers(assignment, present=True)
    done = hit.assignments.filter(submitted_at__isnull=False).count()
    for key in sorted(answers, key=int)[: answer(hit, done)]:
        answers[key] = False
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)


def work_all(batch, workers, answer) -> None:
    while sum(HIT.objects.filter(batch=batch).values_list("open_places", flat=True)):
        submit(next(workers), batch, answer)


def fallback_sd_of(hits) -> float:
    """pilot_max_sd by hand from the HITs' judgments: no estimates (the fallback), prior 0.5."""
    posteriors, starts = [], []
    for hit in hits:
        rows = list(Judgment.objects.filter(assignment__hit=hit).values_list("acu_id", "present").order_by("acu_id"))
        acus, said = zip(*rows, strict=True)
        items = np.unique(acus, return_inverse=True)[1]
        starts.append(sum(len(p) for p in posteriors))
        nan = np.full(len(said), np.nan)
        posteriors.append(pair_posteriors(items, said, nan, nan, 0.5))
    return pilot_max_sd(np.concatenate(posteriors), np.array(starts), quantile=PILOT_QUANTILE)


@pytest.mark.django_db
@pytest.mark.usefixtures("no_refit")
def test_an_adaptive_batch_opens_extra_places_only_where_its_pilots_threshold_says():
    batch = adaptive_batch(allocation_min=2, allocation_max=5)  # the demo's 40 HITs, 3 assignments
    hits = list(batch.hits.order_by("pk"))
    assert len(hits) == 40 and pilot_size(40) == 10
    pilot, later = hits[:10], hits[10:]
    workers = iter(make_workers(200))
    # The pilot is worked first (its wave): the others' places wait.
    HIT.objects.filter(pk__in=[h.pk for h in later]).update(open_places=0)
    assert pilot_threshold(batch, [h.pk for h in pilot], 3) is None  # not bought yet
    # a noisy pilot: its third worker says absent on two ACUs (the per-ACU rule would open a fourth place)
    work_all(batch, workers, lambda hit, j: 2 if j == 2 else 0)
    for hit in pilot:
        hit.refresh_from_db()
        assert (hit.max_assignments, hit.extra_places) == (3, 1), hit.pk  # fixed places: agreeing or not
    threshold = pilot_threshold(batch, [h.pk for h in pilot], 3)
    assert threshold == pytest.approx(fallback_sd_of(pilot))
    assert policy_for(later[0], batch) == Policy(ADAPTIVE, 2, 5, batch.allocation_threshold, threshold)
    # The later HITs: every other one all agree; the others split 1 to 1 on their first ACU.
    HIT.objects.filter(pk__in=[h.pk for h in later]).update(open_places=2)
    index = {h.pk: i for i, h in enumerate(later)}
    work_all(batch, workers, lambda hit, j: 1 if index[hit.pk] % 2 and j == 1 else 0)
    rule = Policy(ADAPTIVE, 2, 5, batch.allocation_threshold, threshold)
    places = []
    for hit in later:
        hit.refresh_from_db()
        decisions = replay(hit, rule)
        assert decisions == [True] * (len(decisions) - 1) + [False], hit.pk  # opened = what the threshold asked
        assert hit.extra_places == len(decisions) - 1 and hit.settled
        places.append(hit.max_assignments)
    # Where the pilot's precision is reached at 2 places, no more is bought; a split HIT buys more.
    assert min(places) == 2 and max(places) >= 3
    agreeing = [p for h, p in zip(later, places, strict=True) if not index[h.pk] % 2]
    split = [p for h, p in zip(later, places, strict=True) if index[h.pk] % 2]
    assert max(agreeing) <= min(split)


@pytest.mark.portable
@pytest.mark.django_db
@pytest.mark.usefixtures("no_refit")
def test_a_stalled_pilot_hit_does_not_hold_the_batch_at_fixed_places():
    """A pilot HIT no worker reaches (its places stay open): once PILOT_QUORUM of the pilot is
    complete, the complete pilot HITs set the threshold; fewer, and every HIT keeps the fixed places."""
    batch = adaptive_batch(allocation_min=2, allocation_max=5)
    hits = list(batch.hits.order_by("pk"))
    pilot, later = [h.pk for h in hits[:10]], hits[10:]
    assert math.ceil(PILOT_QUORUM * len(pilot)) == 8
    workers = iter(make_workers(200))
    stalled = pilot[7:]  # three pilot HITs nobody takes
    HIT.objects.filter(pk__in=[h.pk for h in later] + stalled).update(open_places=0)
    work_all(batch, workers, lambda hit, j: 2 if j == 2 else 0)
    HIT.objects.filter(pk__in=stalled).update(open_places=2)  # waiting for a worker, for good
    assert pilot_threshold(batch, pilot, 3) is None  # 7 of 10 complete: too few
    fixed = Policy(ADAPTIVE, 3, 3, batch.allocation_threshold)
    assert policy_for(later[0], batch) == fixed
    # One of them gets its workers: 8 of 10 complete, their median sets the threshold.
    HIT.objects.filter(pk__in=stalled[1:]).update(open_places=0)
    work_all(batch, workers, lambda hit, j: 2 if j == 2 else 0)
    HIT.objects.filter(pk__in=stalled[1:]).update(open_places=2)
    complete = HIT.objects.filter(pk__in=pilot[:8]).order_by("pk")
    assert [h.max_assignments for h in complete] == [3] * 8
    threshold = pilot_threshold(batch, pilot, 3)
    assert threshold is not None and threshold == pytest.approx(fallback_sd_of(complete))
    assert policy_for(later[0], batch) == Policy(ADAPTIVE, 2, 5, batch.allocation_threshold, threshold)
    # The two still open stay pilot HITs: fixed places when they are worked.
    assert policy_for(HIT.objects.get(pk=stalled[2]), batch) == fixed
    # A place held but not submitted is behind too: the HIT is not complete while it is worked.
    held = handout.next_assignment(next(workers), batch)
    assert held.hit_id in stalled[1:]
    assert pilot_threshold(batch, pilot, 3) == pytest.approx(threshold)  # the 8 are still complete


@pytest.mark.portable
@pytest.mark.django_db
@pytest.mark.usefixtures("no_refit")
def test_the_form_says_the_share_sd_is_optional_and_what_empty_does_and_the_batch_page_shows_the_pilot(client, lead):
    dataset = adaptive_batch(publish=False, hits=2).dataset
    client.force_login(lead)
    form = client.get(reverse("batch_new", args=[dataset.pk])).content.decode()
    field = re.search(r'<input[^>]*name="allocation_max_sd"[^>]*>', form).group(0)
    assert "required" not in field and 'value="' not in field  # optional, empty by default
    help_text = html.unescape(form)
    assert "Empty: a batch of 30 HITs or more sets it from its pilot" in help_text
    assert "a smaller batch settles each ACU at the posterior above" in help_text
    # The API describes it the same way and does not require it.
    schema = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    request = schema["BatchCreateInputRequest"]
    assert (
        "allocation_max_sd" not in request.get("required", [])
        and request["properties"]["allocation_max_sd"]["nullable"]
    )
    assert "sets it from its pilot" in request["properties"]["allocation_max_sd"]["description"]

    # A 40-HIT batch with the field empty: its page and the API say the pilot has not set it yet, then that it has.
    batch = adaptive_batch(dataset, allocation_min=2, allocation_max=5)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "The pilot sets the threshold: the first 10 HITs get 3 places each" in page
    assert "Once 8 of them are worked" in page and "Not set yet" in page
    pilot = [h.pk for h in batch.hits.order_by("pk")[:10]]
    HIT.objects.filter(batch=batch).exclude(pk__in=pilot).update(open_places=0)
    work_all(batch, iter(make_workers(60)), lambda hit, j: 0)
    threshold = pilot_threshold(batch, pilot, 3)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert threshold is not None and f"Set now at <b>{threshold:.3f}</b>" in page
    body = client.get(f"/api/batches/{batch.pk}/").json()["allocation_figures"]["pilot"]
    assert body == {"hits": 10, "needed": 8, "places": 3, "threshold": pytest.approx(threshold)}
    # The lead's own value: no pilot.
    own = adaptive_batch(dataset, allocation_max_sd=0.1)
    assert client.get(f"/api/batches/{own.pk}/").json()["allocation_figures"]["pilot"] is None
    assert "The pilot sets" not in client.get(reverse("batch_detail", args=[own.pk])).content.decode()


def carrying_half(realsumm_path):
    """A bench run of the present crowd whose first non-gold HIT of at least 4 ACUs carries only its
    first half (the rest decided by triage), with one place filled; (run, HIT, its carried pairs)."""
    systems, docs, labels = bench_data(realsumm_path)
    crowd = allocation_bench.simulate_crowd(
        allocation_bench.read_spec(CROWDS / "present.json"), docs, labels, np.random.default_rng(3)
    )
    run = allocation_bench.Run(crowd)
    hit = next(h for h in range(len(crowd.sizes)) if not crowd.gold[h] and crowd.sizes[h] >= 4)
    first = crowd.starts[hit]
    carried = np.arange(first, first + crowd.sizes[hit] // 2)
    run.asked = np.zeros(crowd.truth.size, dtype=bool)
    run.asked[carried] = True
    run.open = run.asked
    run.policy = Policy(ADAPTIVE, 1, 5)
    run.places[hit] = 1
    run.fill(np.array([hit]))
    return run, hit, carried


def test_the_benchs_summary_level_rule_reads_a_triaged_hits_carried_acus_as_the_app_does(realsumm_path):
    """The app (hits.allocation.service.hit_posteriors, hit_settled) takes a HIT's share sd over the
    ACUs it carries; the bench took it over its summary's, the triaged ones at variance 0, so a
    triaged HIT looked more precise than the app finds it and settled with fewer places."""
    run, hit, carried = carrying_half(realsumm_path)
    nan = np.full(run.stopped.size, np.nan)  # no estimates yet: the fallback accuracy, as the app's
    items, workers, said = run.rows()
    p = pair_posteriors(items, said, nan[workers], nan[workers], 0.5, run.crowd.truth.size)
    app_sd = share_sd(p[carried])  # what the app's hit_settled compares
    run.max_sd = 0.9 * app_sd  # the app: not settled, one more place (the bench before: settled)
    assert not hit_settled(replace(run.policy, max_sd=run.max_sd), p[carried])
    run.decide(np.array([hit]), nan, nan, 0.5)
    assert run.places[hit] > 1


def test_the_benchs_pilot_threshold_reads_the_pilots_carried_acus_as_the_app_does(realsumm_path):
    """The app's pilot_threshold is pilot_max_sd of the pilot HITs' judged ACUs (posteriors of their
    counted judgments); the bench's took every ACU of their summaries."""
    run, hit, carried = carrying_half(realsumm_path)
    nan = np.full(run.stopped.size, np.nan)
    items, workers, said = run.rows()
    p = pair_posteriors(items, said, nan[workers], nan[workers], 0.5, run.crowd.truth.size)
    fit = (nan, nan, 0.5, (items, workers, said))
    expected = pilot_max_sd(p[carried], np.array([0]), quantile=PILOT_QUANTILE)
    assert allocation_bench.pilot_threshold(run, np.array([hit]), fit, PILOT_QUANTILE) == pytest.approx(expected)
