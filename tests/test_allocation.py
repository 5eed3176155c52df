"""Adaptive allocation of crowd work (issue 29): the policy (hits/allocation/policy.py) against the
Dawid-Skene fit, the simulation of bench/allocation_bench.py, a batch's allocation settings,
the place opened in the deciding submission's transaction (also under 50 parallel submissions),
the worker estimates' refit, the budget at the most places and the batch page's figures."""

import sys
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Summary
from hits import signals
from hits.allocation.policy import (
    ADAPTIVE,
    PILOT_QUANTILE,
    Policy,
    at_chance,
    hit_settled,
    pair_posteriors,
    pilot_max_sd,
    pilot_size,
    settled,
    share_sd,
    wants_place,
)
from hits.allocation.service import figures as allocation_figures
from hits.allocation.service import lift_stop
from hits.batch_fields import BatchSpec
from hits.models import HIT, Assignment, Batch, JudgeRun, Judgment, MachineJudgment, WorkerEstimate
from hits.selectors.figures import batch_progress
from hits.services import handout
from hits.services.batches import BatchError, cost_estimate, create_batch, publish_batch
from hits.services.submission import submit_assignment
from hits.services.triage import create_triage_batch
from scoring.runs.worker_estimates import refit_estimates
from scoring.stats.dawid_skene import dawid_skene

from .crowd_data import BATCH_FORM, all_answers, at_once, batch_of, demo_dataset
from .test_handout import make_workers

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "bench"))

import allocation_bench  # noqa: E402 - bench/ is put on the path first

# --- the policy ------------------------------------------------------------------------------


def test_wants_place_follows_the_policy():
    adaptive = Policy(ADAPTIVE, 2, 4, 0.9)
    assert wants_place(adaptive, 1, True)  # below the minimum, settled or not
    assert not wants_place(adaptive, 2, True)
    assert wants_place(adaptive, 2, False) and wants_place(adaptive, 3, False)
    assert not wants_place(adaptive, 4, False)  # never past the maximum
    assert not wants_place(Policy(), 2, False)  # fixed: never
    for bad in (("random", 2, 5, 0.9), (ADAPTIVE, 3, 2, 0.9), (ADAPTIVE, 0, 2, 0.9), (ADAPTIVE, 2, 5, 0.5)):
        with pytest.raises(ValueError):
            Policy(*bad)


def test_the_summary_level_rule_settles_on_the_sd_of_the_acu_share():
    p = np.array([0.99, 0.01, 0.5, 0.99, 0.99, 0.01, 0.99, 0.99])  # one ACU undecided
    assert share_sd(p) == pytest.approx(np.sqrt(np.sum(p * (1 - p))) / p.size)
    assert not hit_settled(Policy(ADAPTIVE, 1, 5, 0.9), p)  # per ACU: the undecided one keeps it open
    assert hit_settled(Policy(ADAPTIVE, 1, 5, 0.9, max_sd=0.1), p)  # 0.5 / 8 plus a little: settled as a whole
    assert not hit_settled(Policy(ADAPTIVE, 1, 5, 0.9, max_sd=0.05), p)
    assert not hit_settled(Policy(ADAPTIVE, 1, 5, 0.9, max_sd=0.1), [])  # nothing counted yet
    per_hit = share_sd(np.concatenate([p, [0.5, 0.5]]), starts=np.array([0, 8]))
    assert per_hit.tolist() == pytest.approx([share_sd(p), np.sqrt(0.5) / 2])
    for bad in (0, 0.5, -0.1):
        with pytest.raises(ValueError):
            Policy(ADAPTIVE, 1, 5, 0.9, max_sd=bad)


def test_at_chance_needs_enough_gold_and_a_bound_below_chance():
    upper = np.array([0.05, 0.19, 0.2, 0.6, 0.05, np.nan])  # upper credible bounds of J on gold
    gold_judged = np.array([60, 60, 60, 60, 19, 60])
    # bound under 0.2: stopped; at or above: not; too few gold judgments or no gold fit: not
    assert at_chance(upper, gold_judged, 20).tolist() == [True, True, False, False, False, False]


def test_posterior_is_the_dawid_skene_e_step_with_the_fitted_estimates():
    rng = np.random.default_rng(3)
    truth = rng.random(400) < 0.4
    items = np.repeat(np.arange(400), 5)
    workers = rng.integers(0, 12, items.size)
    accuracy = np.linspace(0.6, 0.9, 12)
    said = np.where(rng.random(items.size) < accuracy[workers], truth[items], ~truth[items])
    fit = dawid_skene(items, workers, said)
    estimates = np.concatenate([fit.sensitivity, fit.specificity])
    assert ((estimates > 0.01) & (estimates < 0.99)).all()  # nothing clipped: the same numbers as the fit
    index = np.searchsorted(fit.workers, workers)
    mine = pair_posteriors(items, said, fit.sensitivity[index], fit.specificity[index], fit.prior)
    assert np.allclose(mine, fit.posterior, atol=1e-9)
    assert np.array_equal(settled(mine, 0.9), np.maximum(fit.posterior, 1 - fit.posterior) >= 0.9)


def test_without_estimates_the_posterior_follows_the_majority_margin():
    nan = np.full(5, np.nan)
    p = pair_posteriors([0, 0, 1, 1, 1], [True, True, True, False, True], nan, nan)
    assert p[0] == pytest.approx(0.8**2 / (0.8**2 + 0.2**2))  # two agree: 0.941
    assert p[1] == pytest.approx(0.8)  # 2 to 1: one vote's margin
    assert settled(p, 0.9).tolist() == [True, False]


# --- the simulation --------------------------------------------------------------------------


def bench_data(realsumm_path, systems_kept=6):
    systems, docs, labels = allocation_bench.expert_labels(Path(realsumm_path), slice(0, 20))
    keep = np.isin(systems, np.unique(systems)[:systems_kept])
    return systems[keep], docs[keep], [x for x, k in zip(labels, keep, strict=True) if k]


CROWDS = PROJECT / "bench" / "crowds"


class JudgedCrowd(NamedTuple):
    spec: dict
    systems: np.ndarray
    docs: np.ndarray
    labels: list
    crowd: object
    judge: object
    experts: np.ndarray


def judged_crowd(realsumm_path, monkeypatch, crowd_file: str) -> JudgedCrowd:
    """The small bench of these tests with a judge: 20 documents of 6 systems, the crowd file's crowd
    (seed 2), the expert documents a 0.3 share of them (seed 0: 6 documents) as gold and as the
    judge's training pairs."""
    monkeypatch.setattr(allocation_bench, "TRIAGE_MIN_AGREEMENT", 0.9)  # 6 expert documents of 6 systems: few pairs
    systems, docs, labels = bench_data(realsumm_path)
    judge = allocation_bench.judge_data(Path(realsumm_path), slice(0, 20), systems, docs, labels)
    assert judge.x.shape[0] == sum(map(len, labels))
    spec = allocation_bench.read_spec(CROWDS / crowd_file)
    crowd = allocation_bench.simulate_crowd(spec, docs, labels, np.random.default_rng(2))
    experts = allocation_bench.expert_documents(docs, 0.3, np.random.default_rng(0))
    crowd.gold = np.isin(docs, experts)
    judge.expert = crowd.gold[crowd.hit_of]
    return JudgedCrowd(spec, systems, docs, labels, crowd, judge, experts)


def test_the_simulated_crowd_follows_its_file(realsumm_path):
    systems, docs, labels = bench_data(realsumm_path)
    spec = allocation_bench.read_spec(CROWDS / "colluders.json")
    crowd = allocation_bench.simulate_crowd(spec, docs, labels, np.random.default_rng(0))
    kinds = allocation_bench.KINDS
    assert np.bincount(crowd.kind, minlength=4).tolist() == [60, 10, 20, 10]
    assert crowd.gold.sum() == round(0.1 * len(labels))
    assert (np.sort(crowd.workers, axis=1)[:, 1:] != np.sort(crowd.workers, axis=1)[:, :-1]).all()  # distinct
    # colluders give one answer per ACU: the same in every summary of the document, whoever asks
    drawn = crowd.workers[crowd.hit_of]  # pairs x DRAWN
    colluding = crowd.kind[drawn.T] == kinds.index("colluder")
    acu = docs[crowd.hit_of] * 1000 + np.arange(crowd.truth.size) - crowd.starts[crowd.hit_of]
    answer = {}
    for j, pair in zip(*np.nonzero(colluding), strict=True):
        assert answer.setdefault(int(acu[pair]), bool(crowd.answers[j, pair])) == bool(crowd.answers[j, pair])
    # honest workers answer near the truth, spammers at chance
    honest = crowd.kind[drawn.T] == kinds.index("honest")
    spam = crowd.kind[drawn.T] == kinds.index("spammer")
    right = crowd.answers == crowd.truth[None, :]
    assert right[honest].mean() > 0.7 and abs(right[spam].mean() - 0.5) < 0.05
    bad = CROWDS / "present.json"
    with pytest.raises(ValueError, match="add up to 1"):
        allocation_bench.read_spec(_written(bad, lambda s: s["groups"].pop()))
    with pytest.raises(ValueError, match="kind is one of"):
        allocation_bench.read_spec(_written(bad, lambda s: s["groups"][0].update(kind="robot")))


def _written(path, change):
    import json
    import tempfile

    spec = json.loads(path.read_text())
    change(spec)
    out = Path(tempfile.mkdtemp()) / "crowd.json"
    out.write_text(json.dumps(spec))
    return out


def test_the_bench_policies_buy_what_they_say_and_the_app_stops_only_on_gold(realsumm_path):
    systems, docs, labels = bench_data(realsumm_path)
    spec = allocation_bench.read_spec(CROWDS / "half-spammers.json")
    spec |= {"workers": 20, "gold_share": 0.5}  # enough gold per worker in 120 HITs for the stop to see
    crowd = allocation_bench.simulate_crowd(spec, docs, labels, np.random.default_rng(1))
    fixed = allocation_bench.run_policy(crowd, "fixed-3")
    assert (fixed.taken.sum(axis=1) == 3).all() and not fixed.stopped.any()
    app = allocation_bench.run_policy(crowd, "app")
    places = app.taken.sum(axis=1)
    assert (places[crowd.gold] == 3).all()  # gold HITs keep the batch's assignments
    plain = places[~crowd.gold]
    assert plain.min() >= 2 and plain.max() <= 5 and (plain > 2).any() and not app.stopped.any()
    stop = allocation_bench.run_policy(crowd, "app+stop")
    stopped_kinds = crowd.kind[np.flatnonzero(stop.stopped)]
    assert stop.stopped.any() and (stopped_kinds == allocation_bench.KINDS.index("spammer")).all()
    # a stopped worker's judgments stay paid and leave the aggregation
    _, paid, _ = stop.rows(counted_only=False)
    _, counted, _ = stop.rows()
    out = np.flatnonzero(stop.stopped)
    assert np.isin(paid, out).any() and not np.isin(counted, out).any()
    results = allocation_bench.run(spec, systems, docs, labels, seeds=1)
    summary = allocation_bench.means(results)
    assert set(summary) == {"fixed-3", "app", "app+stop"}
    assert summary["fixed-3"]["judgments"] == 3 * sum(map(len, labels))
    assert all(0.5 < m["agreement"] <= 1 and -1 <= m["tau"] <= 1 for m in summary.values())
    assert set(summary["app"]["stopped"]) == set(allocation_bench.KINDS)
    assert "| app+stop |" in allocation_bench.table(summary)


def test_the_pilot_sets_the_summary_level_threshold_from_what_fixed_places_bought():
    # Two pilot HITs: sd of the ACU share sqrt(sum p(1 - p)) / ACUs = 0.05 and 0.2 (by hand); the
    # median settles between them, a higher quantile nearer the noisier one.
    first = np.array([0.5, 0.0, 0.0, 0.0, 0.0])  # sqrt(0.25) / 5 = 0.1
    second = np.array([0.5, 0.5, 0.5, 0.5])  # sqrt(1) / 4 = 0.25
    p, starts = np.concatenate([first, second]), np.array([0, 5])
    assert pilot_max_sd(p, starts) == pytest.approx((0.1 + 0.25) / 2)
    assert pilot_max_sd(p, starts, quantile=1.0) == pytest.approx(0.25)
    assert pilot_max_sd(p, starts, sizes=[10, 4], quantile=0.0) == pytest.approx(0.05)  # 10 ACUs, 5 machine-decided
    assert pilot_max_sd([], np.zeros(0, dtype=int)) is None


def test_app_with_the_judge_triages_on_expert_documents_and_pays_the_crowd_only_for_the_rest(
    realsumm_path, monkeypatch
):
    spec, systems, docs, labels, crowd, judge, experts = judged_crowd(realsumm_path, monkeypatch, "present.json")
    run = allocation_bench.run_policy(crowd, "app+judge", judge)
    assert run.triage["c"] is not None and 0 < run.triage["decided"] < 1
    # What the judge decides no one is asked about; expert documents are never triaged.
    items, _, _ = run.rows(counted_only=False)
    assert not np.isin(items, np.flatnonzero(~run.asked)).any()
    assert run.asked[judge.expert].all() and not run.asked.all()
    # The first wave is the pilot at fixed places; it set the summary-level threshold.
    places = run.taken.sum(axis=1)
    first = np.flatnonzero(((np.arange(len(places)) * allocation_bench.WAVES) // len(places)) == 0)
    carries = np.logical_or.reduceat(run.asked, crowd.starts)
    assert (places[first][carries[first]] == 3).all() and (places[~carries] == 0).all()
    assert run.max_sd is not None and 0 < run.max_sd < 0.5
    # The bench's JSON with the judge: the expert documents' judgments are left out of every policy.
    results = allocation_bench.run(spec, systems, docs, labels, seeds=1, policies=("fixed-3", "app+judge"), judge=judge)
    summary = allocation_bench.means(results)
    gold_pairs = sum(len(x) for x, d in zip(labels, docs, strict=True) if d in set(judge.document[judge.expert]))
    assert summary["fixed-3"]["judgments"] == 3 * (sum(map(len, labels)) - gold_pairs)
    assert summary["app+judge"]["judgments"] < summary["fixed-3"]["judgments"] * 1.7
    assert len(summary["app+judge"]["triage"]["c"]) == 1


def test_app_with_the_judge_takes_the_apps_pilot_rule(realsumm_path, monkeypatch):
    """app+judge's pilot is the app's (hits.allocation.service.pilot_of, policy PILOT_QUANTILE): the first
    pilot_size of the HITs the triage leaves, not the bench's first wave at its own quantile 0.75."""
    spec, systems, docs, labels, crowd, judge, experts = judged_crowd(realsumm_path, monkeypatch, "present.json")
    asked = []
    threshold = allocation_bench.pilot_threshold

    def spy(run, pilot, *args):
        asked.append((tuple(pilot.tolist()), args[1] if len(args) > 1 else "the bench's own default"))
        return threshold(run, pilot, *args)

    monkeypatch.setattr(allocation_bench, "pilot_threshold", spy)
    run = allocation_bench.run_policy(crowd, "app+judge", judge)
    carries = np.flatnonzero(np.logical_or.reduceat(run.asked, crowd.starts))
    first = carries[: pilot_size(len(carries))]
    pilot = tuple(h for h in first.tolist() if not crowd.gold[h])
    assert asked and set(asked) == {(pilot, PILOT_QUANTILE)}


def test_pairs_without_triage_reports_its_means(realsumm_path, monkeypatch):
    """bench/RESULTS.md's `--pair-triage 0` command: the judge trains (a prior) but decides nothing, so
    no tau with the triaged pairs at their truth; the means crashed on that None."""
    spec, systems, docs, labels, crowd, judge, experts = judged_crowd(realsumm_path, monkeypatch, "present.json")
    pairs = allocation_bench.PairSettings(triage=False)
    policies = ("fixed-3", allocation_bench.PAIRS_POLICY)
    results = allocation_bench.run(spec, systems, docs, labels, seeds=1, policies=policies, judge=judge, pairs=pairs)
    triage = allocation_bench.means(results)[allocation_bench.PAIRS_POLICY]["triage"]
    assert len(triage["c"]) == 1 and "tau_triaged_at_truth" not in triage


# --- batches ---------------------------------------------------------------------------------


def adaptive_batch(dataset=None, *, hits=None, publish=True, **options):
    dataset = dataset or demo_dataset()
    options = {"assignments": 3, "allocation": ADAPTIVE, "allocation_min": 2, "allocation_max": 5, **options}
    batch = batch_of(dataset, **options)
    if hits is not None:
        batch.hits.exclude(pk__in=list(batch.hits.order_by("pk").values_list("pk", flat=True)[:hits])).delete()
    return publish_batch(batch) if publish else batch


@pytest.mark.django_db
@pytest.mark.portable
def test_adaptive_batch_starts_at_the_minimum_and_the_budget_counts_the_most_places():
    batch = adaptive_batch(publish=False, gold_share=0.2, budget=Decimal("1000.00"))
    gold = batch.hits.filter(gold_answers__isnull=False)
    assert gold.exists()
    assert set(gold.values_list("max_assignments", "open_places")) == {(3, 3)}  # gold HITs as today
    assert set(batch.hits.filter(gold_answers__isnull=True).values_list("max_assignments", "open_places")) == {(2, 2)}
    n, n_gold = batch.hits.count(), gold.count()
    cost = cost_estimate(batch)
    assert cost["assignments"] == 5 * (n - n_gold) + 3 * n_gold
    # the budget check refuses what the most places would cost
    Batch.objects.filter(pk=batch.pk).update(budget=cost["total"] - Decimal("0.01"))
    with pytest.raises(BatchError, match="exceeds the budget"):
        publish_batch(Batch.objects.get(pk=batch.pk))
    assert batch_progress(batch)["places"] == 2 * (n - n_gold) + 3 * n_gold


@pytest.mark.django_db
def test_an_impossible_allocation_is_refused():
    dataset = demo_dataset()
    with pytest.raises(BatchError, match="minimum places"):
        create_batch(dataset=dataset, spec=BatchSpec(allocation=ADAPTIVE, allocation_min=4, allocation_max=3))
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


@pytest.mark.django_db
def test_page_and_api_create_an_adaptive_batch(lead):
    dataset = demo_dataset()
    client = Client()
    client.force_login(lead)
    form = {
        "name": "adaptive by page",
        **BATCH_FORM,
        "gold_share": 0,
        "allocation": "adaptive",
        "allocation_min": 2,
        "allocation_max": 4,
        "allocation_threshold": 0.85,
    }
    response = client.post(reverse("batch_new", args=[dataset.pk]), form)
    assert response.status_code == 302
    batch = Batch.objects.get(name="adaptive by page")
    assert (batch.allocation, batch.allocation_min, batch.allocation_max, batch.allocation_threshold) == (
        "adaptive",
        2,
        4,
        0.85,
    )
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    created = api.post("/api/batches/", {"dataset": dataset.pk, "allocation": "adaptive"}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["allocation"], body["allocation_min"], body["allocation_max"], body["allocation_threshold"]) == (
        "adaptive",
        2,
        5,
        0.9,
    )
    assert body["allocation_figures"]["places"] == 2 * body["hits"]
    assert Decimal(body["allocation_figures"]["saved"]) > 0  # 2 places where fixed buys 3
    fixed = api.post("/api/batches/", {"dataset": dataset.pk}, format="json").json()
    assert fixed["allocation"] == "fixed" and fixed["allocation_figures"] is None
    refused = api.post(
        "/api/batches/",
        {"dataset": dataset.pk, "allocation": "adaptive", "allocation_min": 5, "allocation_max": 3},
        format="json",
    )
    assert refused.status_code == 422 and "minimum" in refused.content.decode()  # a rule between fields
    # the chosen policy of the simulation: summary-level from 1 place, workers at chance stopped
    chosen = api.post(
        "/api/batches/",
        {
            "dataset": dataset.pk,
            "allocation": "adaptive",
            "allocation_min": 1,
            "allocation_max_sd": 0.105,
            "stop_after": 50,
        },
        format="json",
    ).json()
    assert (chosen["allocation_min"], chosen["allocation_max_sd"], chosen["stop_after"]) == (1, 0.105, 50)
    page = client.get(reverse("batch_detail", args=[chosen["id"]])).content.decode()
    assert "standard deviation of its ACU share" in page and "No worker stopped." in page
    for bad, word, status in (
        ({"stop_after": 50}, "needs adaptive allocation", 422),  # a rule between fields
        ({"allocation": "adaptive", "allocation_max_sd": 0.6}, "less than or equal to 0.49", 400),  # the schema's
    ):
        refused = api.post("/api/batches/", {"dataset": dataset.pk, **bad}, format="json")
        assert refused.status_code == status and word in refused.content.decode(), refused.content


# --- the decision in the submission's transaction ---------------------------------------------


@pytest.fixture
def no_refit():
    """The worker estimates stay as they are (none: the fallback), so what the policy asks for
    can be replayed from the judgments alone; the refit has its own test."""
    signals.submission_stored.disconnect(dispatch_uid="scoring.runs.worker_estimates")
    yield
    from scoring.tasks import refit_on_submission

    signals.submission_stored.connect(refit_on_submission, dispatch_uid="scoring.runs.worker_estimates")


def answers_for(assignment, first_present: bool) -> dict:
    answers = all_answers(assignment, present=True)
    answers[min(answers, key=int)] = first_present
    return answers


def work(worker, batch, first_present: bool):
    assignment = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers_for(assignment, first_present))
    return assignment


@pytest.mark.django_db
@pytest.mark.portable
def test_disagreement_opens_one_more_place_and_agreement_settles(no_refit):
    batch = adaptive_batch(hits=2, allocation_max=3)
    split, agreed = batch.hits.order_by("pk")
    a, b, c, d, e = make_workers(5)
    work(a, batch, True)  # one HIT each: places are taken emptiest first
    work(b, batch, True)
    first = Assignment.objects.get(worker=a).hit_id
    hit = HIT.objects.get(pk=first)
    assert (hit.max_assignments, hit.open_places) == (2, 1)  # a place still being worked: no decision
    other = handout.next_assignment(c, batch)  # the second place of a's HIT (equal places: the first HIT)
    assert other.hit_id == first
    submit_assignment(assignment_id=other.pk, worker_id=c.pk, answers=answers_for(other, False))  # disagrees
    hit = HIT.objects.get(pk=first)
    assert (hit.max_assignments, hit.open_places, hit.extra_places, hit.settled) == (3, 1, 1, False)
    # the worker's retry of the same submission is answered from the stored one: nothing opens twice
    again = submit_assignment(assignment_id=other.pk, worker_id=c.pk, answers=answers_for(other, False))
    assert again.created is False
    hit.refresh_from_db()
    assert (hit.max_assignments, hit.open_places, hit.extra_places) == (3, 1, 1)
    # The two open places: the opened one (2 to 1 stays unsettled at 0.9, but 3 is the maximum)
    # and the other HIT's second (agreeing: settled with 2), in the handout's fair order (the
    # larger share of open places first).
    third, last = work(d, batch, True), work(e, batch, True)
    assert {third.hit_id, last.hit_id} == {split.pk, agreed.pk} and third.hit_id != first
    hit.refresh_from_db()
    assert (hit.max_assignments, hit.open_places, hit.extra_places, hit.settled) == (3, 0, 1, False)
    done = HIT.objects.get(pk=third.hit_id)
    assert (done.max_assignments, done.open_places, done.extra_places, done.settled) == (2, 0, 0, True)
    figures = allocation_figures(batch)
    assert (figures["places"], figures["extra_places"], figures["settled_hits"], figures["fixed_places"]) == (
        5,
        1,
        1,
        6,
    )
    # in-house: no fee; against fixed-3, one place fewer on the settled HIT, none on the other
    assert figures["saved"] == done.reward and figures["spent_more"] is None
    assert {split.pk, agreed.pk} == {first, done.pk}


@pytest.mark.django_db
@pytest.mark.portable
def test_refit_stores_every_workers_estimates_and_the_prior(no_refit):
    batch = adaptive_batch(hits=4, allocation_max=2)
    workers = make_workers(3)
    for _ in range(4):
        for i, w in enumerate(workers[:2]):
            work(w, batch, i == 0)
    assert refit_estimates(batch.pk) == 2
    estimates = {e.worker_id: e for e in WorkerEstimate.objects.filter(batch=batch)}
    assert set(estimates) == {workers[0].pk, workers[1].pk}
    assert all(0 < e.sensitivity < 1 and 0 < e.specificity < 1 and e.labels > 0 for e in estimates.values())
    batch.refresh_from_db()
    assert 0 < batch.allocation_prior < 1
    assert refit_estimates(batch.pk) == 2  # again: updated in place, not duplicated
    assert WorkerEstimate.objects.filter(batch=batch).count() == 2


@pytest.mark.django_db
def test_submissions_to_an_adaptive_batch_refit_its_estimates(eager_celery, django_capture_on_commit_callbacks):
    batch = adaptive_batch(hits=3, allocation_max=2)
    first, second = make_workers(2)
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            work(first, batch, True)
    assert not WorkerEstimate.objects.filter(batch=batch).exists()  # one label per pair: nothing to fit
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            work(second, batch, False)
    # the latest refit saw every judgment of both workers
    labels = dict(WorkerEstimate.objects.filter(batch=batch).values_list("worker_id", "labels"))
    acus = sum(batch.hits.values_list("acu_count", flat=True))
    assert labels == {first.pk: acus, second.pk: acus}
    fixed = publish_batch(create_batch(dataset=batch.dataset, spec=BatchSpec(assignments=2)))
    with django_capture_on_commit_callbacks(execute=True):
        work(make_workers(1, prefix="f")[0], fixed, True)
    assert not WorkerEstimate.objects.filter(batch=fixed).exists()


@pytest.mark.django_db
@pytest.mark.portable
def test_a_triage_batch_can_be_adaptive(no_refit):
    """The crowd gets only the ACU the machine is unsure of (one per summary here); its places follow the answers."""
    dataset = demo_dataset()
    machine = Batch.objects.create(dataset=dataset, name="lexical", kind=Batch.Kind.MACHINE)
    run = JudgeRun.objects.create(
        batch=machine, judge="lexical", status=JudgeRun.Status.DONE, calibration={"target": "demo labels"}
    )
    rows = []
    for summary in Summary.objects.filter(system__dataset=dataset).select_related("document__reference"):
        acus = list(summary.document.reference.acus.order_by("sentence__position", "position"))
        rows += [
            MachineJudgment(run=run, summary=summary, acu=acu, raw=0.0, probability=0.5 if i == 0 else 0.99)
            for i, acu in enumerate(acus)
        ]
    MachineJudgment.objects.bulk_create(rows)
    batch = create_triage_batch(
        run, confidence=0.9, assignments=3, allocation=ADAPTIVE, allocation_min=2, allocation_max=3, gold_share=0.2
    )
    assert set(batch.hits.values_list("acu_count", "max_assignments", "open_places")) == {(1, 2, 2)}
    batch = publish_batch(batch)
    batch.hits.exclude(pk=batch.hits.order_by("pk").first().pk).delete()
    hit = batch.hits.get()
    a, b = make_workers(2)
    for worker, present in ((a, True), (b, False)):
        assignment = handout.next_assignment(worker, batch)
        submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers={str(hit.acu_ids[0]): present})
    hit.refresh_from_db()
    assert (hit.max_assignments, hit.open_places, hit.extra_places) == (3, 1, 1)


def replay(hit: HIT, policy: Policy) -> list[bool]:
    """What the policy asked at each decision of the HIT: with m places all submitted, the
    judgments of its first m assignments (later ones exist only once a place opened)."""
    done = list(hit.assignments.order_by("pk"))
    asked = []
    for m in range(policy.min_places, len(done) + 1):
        rows = list(
            Judgment.objects.filter(assignment__in=done[:m]).values_list("acu_id", "present").order_by("acu_id")
        )
        acus, said = zip(*rows, strict=True)
        _, items = np.unique(acus, return_inverse=True)
        nan = np.full(len(said), np.nan)
        all_settled = hit_settled(policy, pair_posteriors(items, said, nan, nan, 0.5))
        asked.append(wants_place(policy, m, all_settled))
    return asked


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("max_sd", [None, 0.08], ids=["per-ACU rule", "summary-level rule"])
def test_fifty_parallel_submissions_open_exactly_the_places_asked_for(no_refit, max_sd):
    batch = adaptive_batch(hits=25, allocation_max=4, allocation_max_sd=max_sd)  # 50 first places
    policy = Policy(ADAPTIVE, 2, 4, batch.allocation_threshold, max_sd)
    workers = make_workers(100)
    pool = iter(workers)
    acknowledged, waves = [], 0
    while True:
        open_places = sum(HIT.objects.filter(batch=batch).values_list("open_places", flat=True))
        if not open_places:
            break
        waves += 1
        # every open place taken by a fresh worker, then all submitted at once
        taken = [(w, handout.next_assignment(w, batch)) for w in [next(pool) for _ in range(open_places)]]

        def submit(worker, assignment):
            hit_index = assignment.hit_id % 3
            # a third of the HITs agree; the others split on one ACU by the worker's parity
            present = True if hit_index == 0 else worker.pk % 2 == 0
            submit_assignment(
                assignment_id=assignment.pk, worker_id=worker.pk, answers=answers_for(assignment, present)
            )
            return assignment.pk

        results, errors = at_once(*(lambda w=w, a=a: submit(w, a) for w, a in taken))
        assert errors == [], errors[0]
        acknowledged += results
        if waves == 1:
            assert len(results) == 50
    hits = list(HIT.objects.filter(batch=batch))
    # 0 lost: every acknowledged submission stored with all its answers
    stored = Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED)
    assert sorted(stored.values_list("pk", flat=True)) == sorted(acknowledged)
    assert Judgment.objects.filter(assignment__hit__batch=batch).count() == sum(
        h.acu_count * h.max_assignments for h in hits
    )
    # 0 over-filled, never past the maximum
    for hit in hits:
        assert hit.assignments.filter(status__in=Assignment.ACTIVE).count() == hit.max_assignments <= 4
        assert hit.open_places == 0
    # places opened = places the policy asked for, decision by decision
    opened = asked = 0
    for hit in hits:
        decisions = replay(hit, policy)
        assert decisions == [True] * (len(decisions) - 1) + [False], hit.pk
        opened += hit.extra_places
        asked += sum(decisions)
        assert hit.settled == hit_settled(policy, pair_posteriors(*_rows(hit), 0.5))
    assert opened == asked == sum(h.max_assignments for h in hits) - 50
    assert opened > 0 and any(h.settled for h in hits)


def _rows(hit):
    rows = list(Judgment.objects.filter(assignment__hit=hit).values_list("acu_id", "present").order_by("acu_id"))
    acus, said = zip(*rows, strict=True)
    _, items = np.unique(acus, return_inverse=True)
    nan = np.full(len(said), np.nan)
    return items, said, nan, nan


# --- the summary-level rule and stopping workers at chance (i29c) ------------------------------


@pytest.mark.django_db
@pytest.mark.portable
def test_the_summary_level_rule_settles_a_hit_the_per_acu_rule_keeps_open(no_refit):
    opened = {}
    dataset = demo_dataset()
    for max_sd in (None, 0.3):
        batch = adaptive_batch(
            dataset, hits=1, allocation_min=2, allocation_max=3, allocation_max_sd=max_sd, name=f"sd {max_sd}"
        )
        first, second = make_workers(2, prefix=f"sd{max_sd}-")
        work(first, batch, True)
        work(second, batch, False)  # one ACU of the HIT split 1 to 1
        hit = batch.hits.get()
        assert hit.acu_count >= 4  # 0.5 / ACUs plus the agreed ones stays under 0.3
        opened[max_sd] = (hit.extra_places, hit.settled)
    assert opened == {None: (1, False), 0.3: (0, True)}


@pytest.mark.django_db
def test_stopping_at_chance_needs_an_adaptive_batch():
    with pytest.raises(BatchError, match="needs adaptive allocation"):
        create_batch(dataset=demo_dataset(), spec=BatchSpec(assignments=3, stop_after=50))


@pytest.mark.django_db
@pytest.mark.portable
def test_a_stop_and_its_lift_leave_the_leads_own_exclusion(no_refit):
    batch = adaptive_batch(hits=6, allocation_min=3, allocation_max=3, stop_after=10)
    spammer, other = make_workers(2, prefix="keep")
    spammer.excluded = True
    spammer.save(update_fields=["excluded"])
    gold = {"positives": 20, "said_present": 20, "negatives": 20, "said_absent": 0}
    for worker in (spammer, other):
        WorkerEstimate.objects.create(
            batch=batch, worker=worker, sensitivity=0.99, specificity=0.02, gold_judged=40, chance_upper=0.05, gold=gold
        )
    WorkerEstimate.objects.filter(worker=other).update(gold_judged=9)  # too little gold yet
    from hits.allocation.service import stop_at_chance

    assert stop_at_chance(batch) == [spammer.pk]
    assert "0 of 20 absent ones said absent" in WorkerEstimate.objects.get(worker=spammer).stop_reason
    assert lift_stop(batch, spammer.pk)
    spammer.refresh_from_db()
    assert spammer.excluded  # the lead excluded them: neither the stop nor its lift touches that
