"""bench/app_pairs_bench.py (issue 43): the app's `pairs` allocation and a fixed-3 batch worked by a
simulated crowd through the app's own services, on a small slice of REALSumm (4 documents, 5
systems, 12 workers, one seed). Properties, not figures: what is counted is what the app handed
out, fixed-3 asks every pair three times, the answers are the crowd model's, the gold is the lab's
expert documents, and the labels are the majority or the posterior as the app's scores read them."""

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from hits.models import HIT, Assignment, Judgment, MachineJudgment, WorkerEstimate
from hits.signals import judgments_changed, submission_stored

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import app_pairs_bench as bench  # noqa: E402 - the bench folder is on the path first

from scoring.stats.triage_crossfit import SUGGEST_GRID, choose  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "realsumm"
C = 0.8
CROWD = {
    "workers": 12,
    "gold_share": 0.1,
    "hard_share": 0.2,
    "hard_shrink": 0.7,
    "groups": [
        {"kind": "honest", "share": 0.75, "sensitivity": {"beta": [8, 2]}, "specificity": {"beta": [8, 2]}},
        {"kind": "spammer", "share": 0.25, "sensitivity": {"fixed": 1.0}, "specificity": {"fixed": 0.0}},
    ],
}


@pytest.fixture
def quiet():
    """The bench's signals: no refit per submission (it refits per round), no score recomputes."""
    bench.quiet_signals()
    yield
    from scoring.runs.recompute import on_judgments_changed
    from scoring.tasks import refit_on_submission

    submission_stored.connect(refit_on_submission, dispatch_uid="scoring.runs.worker_estimates")
    judgments_changed.connect(on_judgments_changed, dispatch_uid="scoring.runs.recompute")


def answers_of(batch) -> list[tuple[int, int, int, bool]]:
    return list(
        Judgment.objects.filter(assignment__hit__batch=batch).values_list(
            "assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present"
        )
    )


@pytest.mark.django_db
@pytest.mark.portable
@pytest.mark.skipif(not (DATA / "labels").is_dir(), reason="the shared REALSumm folder is not here")
def test_the_app_bench_counts_what_the_app_handed_out_and_reads_its_labels(quiet, monkeypatch):
    workers = bench.make_workers(CROWD["workers"], "t")
    chosen = bench.triage_confidence
    # on 2 expert documents of 5 systems no confidence passes (below): the triage at 0.8 instead
    monkeypatch.setattr(bench, "triage_confidence", lambda lab: C)
    out = bench.run_seed(DATA, slice(50, 54), CROWD, 100, workers, 0.1, systems=5)
    lab, crowd, u = out["lab"], out["crowd"], out["u"]
    fixed, pairs = out["batches"]["fixed-3"], out["batches"]["pairs"]
    index_of = {w.pk: i for i, w in enumerate(workers)}

    # the lab's gold: the expert documents' summaries (2 of 4 documents), in both batches; the judge
    # trained on their labels only, and it is the pairs batch's prior
    expert_summaries = {
        s for (s, _), d in zip(lab.keys, np.repeat(lab.docs, lab.sizes), strict=True) if d in lab.experts
    }
    assert len(lab.experts) == 2 and set(lab.experts) <= set(range(50, 54))
    for batch in (fixed, pairs):
        assert (
            set(batch.hits.filter(gold_answers__isnull=False).values_list("summary_id", flat=True)) == expert_summaries
        )
    expert_pairs = sum(1 for s, _ in lab.keys if s in expert_summaries)
    assert lab.judge_run.calibration["labelled_pairs"] == expert_pairs
    assert pairs.allocation_judge_run_id == lab.judge_run.pk
    # the pairs batch's defaults, the setting pairs+judge measured
    assert (pairs.allocation_min, pairs.allocation_threshold) == (1, 0.725)

    # triage: the judge's confidence chosen on the expert documents only (choose on their stored,
    # out-of-fold probabilities, allocation_bench's criterion)
    probability = {
        (s, a): p
        for s, a, p in MachineJudgment.objects.filter(run=lab.judge_run).values_list(
            "summary_id", "acu_id", "probability"
        )
    }
    expert = np.array([s in expert_summaries for s, _ in lab.keys])
    c_by_hand = choose(
        np.array([probability[k] for k in lab.keys])[expert],
        lab.truth[expert],
        np.repeat(np.arange(len(lab.sizes)), lab.sizes)[expert],
        np.repeat(lab.docs, lab.sizes)[expert],
        np.repeat(lab.systems, lab.sizes)[expert],
        SUGGEST_GRID,
        min_agreement=0.97,
        max_change=1.0,
    )
    assert chosen(lab) == c_by_hand
    # here none passes, by hand: at the grid's largest c, 0.99, the judge's labels where it decides and
    # the expert labels elsewhere agree with the expert labels on less than 0.97 of the expert pairs
    p, truth = np.array([probability[k] for k in lab.keys])[expert], lab.truth[expert]
    sure = (p >= 0.99) | (p <= 0.01)
    assert c_by_hand is None and sure.any() and np.mean(np.where(sure, p >= 0.5, truth) == truth) < 0.97
    # at 0.8: the non-gold HITs carry only the pairs the judge is unsure of, the gold HITs every pair
    assert (pairs.triage_run_id, pairs.triage_confidence) == (lab.judge_run.pk, C)
    unsure = {k for k in lab.keys if k[0] not in expert_summaries and 1 - C < probability[k] < C}
    carried = set()
    for hit in pairs.hits.filter(follow_up=0):
        acus = set(hit.task_acus().values_list("pk", flat=True))
        if hit.gold_answers is None:
            carried |= {(hit.summary_id, a) for a in acus}
        else:
            assert len(acus) == hit.summary.document.reference.acus.count()
    decided = {k for k in lab.keys if k[0] not in expert_summaries} - unsure
    assert carried == unsure and decided
    assert out["pairs"]["triage"] == {"c": C, "decided": pytest.approx(len(decided) / (len(decided) + len(unsure)))}

    for name, batch in (("fixed-3", fixed), ("pairs", pairs)):
        # every place was taken and submitted; the judgments counted are the ACUs the handed-out
        # non-gold tasks showed (a follow-up shows only its open ACUs)
        assert sum(h.open_places for h in batch.hits.all()) == 0
        assert set(Assignment.objects.filter(hit__batch=batch).values_list("status", flat=True)) == {"approved"}
        shown = sum(
            a.hit.acu_count
            for a in Assignment.objects.filter(hit__batch=batch, hit__gold_answers__isnull=True).select_related("hit")
        )
        assert out[name]["judgments"] == shown == bench.crowd_judgments(batch)
        # every answer is the simulated worker's (the crowd model, one draw per worker and pair)
        for summary, acu, worker, present in answers_of(batch):
            pair, w = lab.index[(summary, acu)], index_of[worker]
            assert present == bool(crowd.said(np.array([w]), np.array([pair]), u[w, [pair]])[0])

    # fixed-3: three workers on every non-gold pair
    plain = [k for k in lab.keys if k[0] not in expert_summaries]
    assert out["fixed-3"]["judgments"] == 3 * len(plain)
    per_hit = Counter(Assignment.objects.filter(hit__batch=fixed).values_list("hit_id", flat=True))
    assert set(per_hit.values()) == {3} and len(per_hit) == len({s for s, _ in lab.keys})
    # pairs: fewer, each summary asked at least once all the pairs the judge left, follow-ups asking fewer ACUs
    assert len(unsure) <= out["pairs"]["judgments"] < out["fixed-3"]["judgments"]
    follow_ups = list(HIT.objects.filter(batch=pairs, follow_up__gt=0))
    assert follow_ups and all(h.acu_count <= h.summary.document.reference.acus.count() for h in follow_ups)

    # labels by hand: fixed-3 the majority of the three answers; agreement over the non-gold pairs
    labels, judged = bench.round_labels(lab, fixed)
    votes: dict[int, list[bool]] = {}
    for summary, acu, _, present in answers_of(fixed):
        votes.setdefault(lab.index[(summary, acu)], []).append(present)
    for pair, said in votes.items():
        assert len(said) == 3 and labels[pair] == (sum(said) >= 2)
    truth, gold = lab.truth, np.repeat(np.isin(lab.docs, lab.experts), lab.sizes)
    assert judged.all()
    by_hand = np.mean([labels[p] == truth[p] for p in range(len(truth)) if not gold[p]])
    assert out["fixed-3"]["agreement"] == pytest.approx(by_hand)
    # pairs: a pair one counted worker judged, by hand: the judge run's probability as prior odds,
    # times the worker's likelihood ratio from the batch's estimates (0.8 without one), clipped to 0.01-0.99
    pair_labels, pair_judged = bench.round_labels(lab, pairs)
    prior = {
        lab.index[(s, a)]: min(max(p, 0.01), 0.99)
        for s, a, p in MachineJudgment.objects.filter(run=lab.judge_run).values_list(
            "summary_id", "acu_id", "probability"
        )
    }
    estimates = {
        w: (min(max(s, 0.01), 0.99), min(max(t, 0.01), 0.99))
        for w, s, t, stopped in WorkerEstimate.objects.filter(batch=pairs).values_list(
            "worker_id", "sensitivity", "specificity", "stopped_at"
        )
        if stopped is None
    }
    stopped = set(
        WorkerEstimate.objects.filter(batch=pairs, stopped_at__isnull=False).values_list("worker_id", flat=True)
    )
    answered: dict[int, list[tuple[int, bool]]] = {}
    for summary, acu, worker, present in answers_of(pairs):
        if worker not in stopped:
            answered.setdefault(lab.index[(summary, acu)], []).append((worker, present))
    once = [(p, *said[0]) for p, said in answered.items() if len(said) == 1 and not gold[p]]
    assert once
    for pair, worker, present in once:
        s, t = estimates.get(worker, (0.8, 0.8))
        yes, no = prior[pair] * (s if present else 1 - s), (1 - prior[pair]) * (1 - t if present else t)
        assert pair_judged[pair] and pair_labels[pair] == (yes > no)
    # a pair the judge decided: its label (probability at least 0.5), no worker asked
    for key in decided:
        assert pair_judged[lab.index[key]] and pair_labels[lab.index[key]] == (probability[key] >= 0.5)
        assert not any(p == lab.index[key] for p in answered)
    assert out["pairs"]["agreement"] == pytest.approx(np.mean((pair_labels == truth)[~gold]))

    # last (the round's labels read these probabilities): the non-expert ones never move the confidence
    MachineJudgment.objects.filter(run=lab.judge_run).exclude(summary_id__in=expert_summaries).update(probability=0.5)
    assert chosen(lab) == c_by_hand

    # the figures the bench prints at the end, over this seed's rows (the simulation's extra key absent)
    summary = bench.means({name: [out[name]] for name in bench.POLICIES})
    assert summary["pairs"]["triage"] == {"c": [C], "decided": out["pairs"]["triage"]["decided"]}
    assert summary["pairs"]["judgments"] == out["pairs"]["judgments"] and "triage" not in summary["fixed-3"]
    against = bench.paired({name: [out[name]] for name in bench.POLICIES})["pairs"]
    assert against["saved"][0] == pytest.approx(1 - out["pairs"]["judgments"] / out["fixed-3"]["judgments"])


@pytest.mark.django_db
@pytest.mark.portable
@pytest.mark.skipif(not (DATA / "labels").is_dir(), reason="the shared REALSumm folder is not here")
def test_the_app_bench_reads_a_held_back_triage_as_decided_during_the_round(quiet, monkeypatch):
    """--pair-triage-when spammers: the pairs batch decides its triage during the round (a refit after the
    gold round); the figures read the labels as the scores do after that decision, not the batch as made."""
    workers = bench.make_workers(CROWD["workers"], "t")
    monkeypatch.setattr(bench, "triage_confidence", lambda lab: C)
    out = bench.run_seed(DATA, slice(50, 54), CROWD, 100, workers, 0.1, systems=5, when="spammers")
    pairs = out["batches"]["pairs"]
    pairs.refresh_from_db()
    assert pairs.triage_when == "spammers" and pairs.triage_state == "on"  # a quarter of the crowd always says present
    triage = out["pairs"]["triage"]
    assert triage["state"] == "on" and triage["decision"]["at_chance"] >= 1 and triage["decided"] > 0
    # every non-gold pair has a label: the crowd's, or the judge's where the triage decided it
    assert out["pairs"]["unjudged"] == 0
    labels, judged = bench.round_labels(out["lab"], pairs)
    gold = np.repeat(np.isin(out["lab"].docs, out["lab"].experts), out["lab"].sizes)
    assert judged[~gold].all()
    assert out["pairs"]["agreement"] == pytest.approx(np.mean((labels == out["lab"].truth)[~gold]))
