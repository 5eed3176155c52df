"""Adaptive allocation by ACU in the app (issue 43, `pairs`): a summary's first HIT asks a worker all
its ACUs; while any of its pairs is open (hits.allocation.policy.open_pairs on the posterior with
each pair's prior, a judge run's calibrated probability or the batch's), a follow-up HIT of one
place asks a new worker only the open ones, paid by the bucket of the ACUs it shows."""

import json
from io import StringIO

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Summary
from hits.allocation.policy import PAIRS, pair_posteriors, settled
from hits.allocation.service import figures as allocation_figures
from hits.allocation.service import summary_posteriors
from hits.api.batches import BatchSerializer
from hits.models import HIT, Assignment, Batch, JudgeRun, Judgment, LedgerEntry, MachineJudgment
from hits.money import Bucket, bucket_for
from hits.selectors import batches_with_counts
from hits.services import handout
from hits.services.batches import cost_estimate, publish_batch
from hits.services.review import approve
from hits.services.submission import submit_assignment
from scoring.results.exports.rose import export_rose
from scoring.runs.services import compute_scores, summary_scores_arrays

from .crowd_data import at_once, batch_of, demo_dataset
from .test_allocation import no_refit  # noqa: F401 - the fixture: no refit, the fallback estimates
from .test_handout import make_workers

THRESHOLD = 0.9


def pairs_batch(dataset, **options):
    options = {
        "assignments": 3,
        "allocation": PAIRS,
        "allocation_min": 1,
        "allocation_max": 3,
        "allocation_threshold": THRESHOLD,
        **options,
    }
    return publish_batch(batch_of(dataset, **options))


def said(worker_index: int, summary_id: int, acu_id: int) -> bool:
    """The simulated crowd: the truth is a fixed function of the pair; a worker errs on about a
    quarter of the pairs, a different quarter for each worker."""
    truth = (summary_id + acu_id) % 3 != 0
    wrong = (acu_id * 7 + summary_id * 3 + worker_index * 5) % 4 == 0
    return truth != wrong


def run_crowd(batch, workers) -> int:
    """Every worker takes the batch's next place and answers the ACUs it shows, until no place is
    left for anyone; returns the places worked."""
    done = 0
    while True:
        worked = 0
        for i, worker in enumerate(workers):
            try:
                assignment = handout.next_assignment(worker, batch)
            except handout.NoWork:
                continue
            hit = assignment.hit
            answers = {str(acu): said(i, hit.summary_id, acu) for acu in hit.task_acus().values_list("pk", flat=True)}
            submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
            worked += 1
        if not worked:
            return done
        done += worked


def open_by_hand(batch, summary_id: int, before_follow_up: int, acus: list[int]) -> list[int]:
    """The ACUs a hand computation leaves open after the judgments of the summary's HITs before
    this follow-up: fallback workers (0.8 / 0.8, no estimates), the batch prior 0.5."""
    rows = list(
        Judgment.objects.filter(
            assignment__hit__batch=batch,
            assignment__hit__summary_id=summary_id,
            assignment__hit__follow_up__lt=before_follow_up,
        ).values_list("acu_id", "present")
    )
    index = {a: i for i, a in enumerate(acus)}
    items = [index[a] for a, _ in rows]
    nan = [float("nan")] * len(rows)
    posterior = pair_posteriors(items, [p for _, p in rows], nan, nan, 0.5, n_items=len(acus))
    judged = np.bincount(items, minlength=len(acus))
    return [a for a, p, n in zip(acus, posterior, judged, strict=True) if n == 0 or not settled([p], THRESHOLD)[0]]


@pytest.mark.django_db
@pytest.mark.portable
def test_a_simulated_crowd_asks_new_workers_only_the_open_acus_and_every_place_is_paid_once(no_refit):  # noqa: F811
    dataset = demo_dataset()
    batch = pairs_batch(dataset, gold_share=0.2)
    gold = set(batch.hits.filter(gold_answers__isnull=False).values_list("summary_id", flat=True))
    assert gold and set(batch.hits.filter(gold_answers__isnull=False).values_list("max_assignments", flat=True)) == {3}
    assert set(batch.hits.filter(gold_answers__isnull=True).values_list("max_assignments", flat=True)) == {1}
    workers = make_workers(6)
    worked = run_crowd(batch, workers)

    hits = list(batch.hits.order_by("summary_id", "follow_up"))
    assert worked == Assignment.objects.filter(hit__batch=batch).count()
    # gold first: the first two rounds of the six workers all went to gold HITs (3 places each), though
    # the gold summaries' turns are spread through the batch and the other HITs' single places are open
    order = list(Assignment.objects.filter(hit__batch=batch).order_by("pk").values_list("hit__summary_id", flat=True))
    assert len(gold) >= 3 and order[:12] == [s for s in order[:12] if s in gold]
    assert min(batch.hits.filter(summary_id__in=gold).values_list("turn", flat=True)) > 0
    # the batch completes: no place open, none held, every one submitted
    assert sum(h.open_places for h in hits) == 0
    assert set(Assignment.objects.filter(hit__batch=batch).values_list("status", flat=True)) == {"submitted"}
    # never a worker twice on a summary of the batch
    seen = list(Assignment.objects.filter(hit__batch=batch).values_list("worker_id", "hit__summary_id"))
    assert len(seen) == len(set(seen))
    follow_ups = [h for h in hits if h.follow_up]
    assert follow_ups, "the simulated crowd left some pairs open after one worker"
    assert not {h.summary_id for h in follow_ups} & gold  # gold HITs keep their places, no follow-up
    buckets = [Bucket(b.min_acus, b.max_acus, b.reward) for b in batch.buckets.all()]
    firsts = {h.summary_id: h for h in hits if not h.follow_up}
    shrank = False
    for hit in follow_ups:
        every = list(firsts[hit.summary_id].task_acus().values_list("pk", flat=True))
        # a follow-up asks exactly the pairs the hand computation leaves open, nothing else
        assert hit.acu_ids == open_by_hand(batch, hit.summary_id, hit.follow_up, every)
        assert hit.max_assignments == 1 and hit.acu_count == len(hit.acu_ids)
        assert hit.reward == bucket_for(buckets, hit.acu_count).reward  # paid by the bucket of what it shows
        judged = set(Judgment.objects.filter(assignment__hit=hit).values_list("acu_id", flat=True))
        assert judged == set(hit.acu_ids)
        shrank |= len(hit.acu_ids) < len(every)
    assert shrank, "some follow-up asked fewer ACUs than the summary has"
    # a first HIT asks every ACU of its summary
    for hit in firsts.values():
        every = set(hit.task_acus().values_list("pk", flat=True))
        for assignment in hit.assignments.all():
            assert set(assignment.judgments.values_list("acu_id", flat=True)) == every
    # each summary stopped because its pairs settled or it held the most places
    for summary_id, first in firsts.items():
        if summary_id in gold:
            continue
        mine = [h for h in hits if h.summary_id == summary_id]
        every = list(first.task_acus().values_list("pk", flat=True))
        still = open_by_hand(batch, summary_id, len(mine), every)
        assert not still or sum(h.max_assignments for h in mine) == 3
        assert HIT.objects.get(pk=first.pk).settled == (not still)

    # the batch page's figures: every place bought, follow-up places beyond the first, against fixed-3
    figures = allocation_figures(batch)
    assert (figures["hits"], figures["places"], figures["extra_places"]) == (
        len(firsts),
        sum(h.max_assignments for h in hits),
        len(follow_ups),
    )
    fixed_cost = sum(3 * h.reward for h in firsts.values())
    assert figures["saved"] == fixed_cost - sum(h.max_assignments * h.reward for h in hits) > 0
    assert figures["settled_hits"] == sum(HIT.objects.get(pk=h.pk).settled for h in firsts.values())
    # the estimate (and the budget check) counts each summary once, at its most places, follow-ups or not
    cost = cost_estimate(batch)
    assert (cost["hits"], cost["assignments"]) == (len(firsts), 3 * len(firsts))
    # the API's batch: its HITs one per summary, the follow-ups apart
    body = BatchSerializer(batches_with_counts().get(pk=batch.pk)).data
    assert (body["hits"], body["follow_up_hits"]) == (len(firsts), len(follow_ups))

    # money: one reward per approved assignment, at its HIT's reward, however often approved
    assignments = list(Assignment.objects.filter(hit__batch=batch).select_related("hit"))
    for assignment in assignments:
        approve(assignment_id=assignment.pk)
    for assignment in assignments[:3]:
        approve(assignment_id=assignment.pk)
    rewards = LedgerEntry.objects.filter(batch=batch, kind=LedgerEntry.Kind.REWARD)
    assert rewards.count() == len(assignments)
    assert {(e.assignment_id, e.amount) for e in rewards} == {(a.pk, a.hit.reward) for a in assignments}


@pytest.mark.django_db
@pytest.mark.portable
def test_scores_and_export_read_a_summarys_labels_from_several_hits_as_from_one(no_refit):  # noqa: F811
    dataset = demo_dataset()
    batch = pairs_batch(dataset)
    run_crowd(batch, make_workers(5))
    assert batch.hits.filter(follow_up__gt=0).exists()
    # the same labels, one HIT per summary: each worker's labels of a summary in one assignment
    # (a pairs round too: its labels are the same posteriors, over the same prior and no estimates)
    one = one_hit_each(batch, PAIRS)
    pairs_run, one_run = compute_scores(dataset, batch), compute_scores(dataset, one)
    assert pairs_run.status == one_run.status == "done"
    assert pairs_run.outputs["systems"] and pairs_run.outputs["alpha"]
    assert pairs_run.outputs == one_run.outputs  # system scores, both alphas, pairwise tests, counts

    def records(round_):
        out = StringIO()
        export_rose(dataset, out, batch=round_)
        rows = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
        for row in rows:
            for annotation in row.get("annotations", {}).values():
                if isinstance(annotation, dict):
                    annotation.pop("label_sources", None)
        return rows

    assert records(batch) == records(one)


def exported(dataset, round_, summary) -> dict:
    """The RoSE export's annotation of `summary` in the export of `round_`."""
    out = StringIO()
    export_rose(dataset, out, batch=round_)
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        if record["example_id"] == summary.document.external_id:
            return record["annotations"][summary.system.name]
    raise AssertionError(f"summary {summary.pk} is not in the export")


def one_hit_each(batch, allocation: str) -> Batch:
    """A round of the batch's dataset holding the batch's counted labels in one HIT per summary:
    each worker's labels of a summary in one assignment."""
    one = Batch.objects.create(
        dataset=batch.dataset, name=f"one HIT each, {allocation}", status=Batch.Status.COMPLETE, allocation=allocation
    )
    by_summary = {}
    for summary_id in batch.hits.values_list("summary_id", flat=True).distinct():
        by_summary[summary_id] = HIT.objects.create(batch=one, summary_id=summary_id, max_assignments=3)
    for assignment in Assignment.objects.filter(hit__batch=batch, status="submitted").select_related("hit"):
        copy = Assignment.objects.create(
            hit=by_summary[assignment.hit.summary_id], worker_id=assignment.worker_id, status="submitted"
        )
        Judgment.objects.bulk_create(
            Judgment(assignment=copy, acu_id=j.acu_id, present=j.present) for j in assignment.judgments.all()
        )
    return one


def judge_run(dataset, probabilities) -> JudgeRun:
    machine = Batch.objects.create(dataset=dataset, name="learned", kind=Batch.Kind.MACHINE)
    run = JudgeRun.objects.create(
        batch=machine, judge="learned", status=JudgeRun.Status.DONE, calibration={"target": "expert labels"}
    )
    MachineJudgment.objects.bulk_create(
        MachineJudgment(run=run, summary_id=s, acu_id=a, raw=p, probability=p) for (s, a), p in probabilities.items()
    )
    return run


@pytest.mark.django_db
@pytest.mark.portable
def test_the_judge_runs_probability_is_each_pairs_prior_and_the_first_worker_never_gets_the_follow_up(
    no_refit,  # noqa: F811
):
    dataset = demo_dataset()
    summary = Summary.objects.filter(system__dataset=dataset).order_by("pk").first()
    acus = list(summary.document.reference.acus.order_by("sentence__position", "position").values_list("pk", flat=True))
    assert len(acus) >= 5
    priors = {acus[0]: 0.95, acus[1]: 0.95, acus[2]: 0.02, acus[3]: 0.99}  # the rest: no probability, the batch prior
    run = judge_run(dataset, {(summary.pk, a): p for a, p in priors.items()})
    batch = pairs_batch(dataset, allocation_judge_run=run.pk)
    assert batch.allocation_judge_run_id == run.pk
    batch.hits.exclude(summary=summary).delete()
    a, b, c = make_workers(3)
    first = handout.next_assignment(a, batch)
    answers = {str(acu): acu not in acus[1:4] for acu in acus}  # absent: ACUs 1, 2 and 3
    submit_assignment(assignment_id=first.pk, worker_id=a.pk, answers=answers)
    # by hand, prior odds times 4 for "present" (0.8 / 0.8), a quarter for "absent":
    # ACU 0: 19 * 4 = 76, P = 76/77 (settled); ACU 1: 19 / 4, P = 19/23 (open);
    # ACU 2: (1/49) / 4, P = 1/197 (settled); ACU 3: 99 / 4, P = 99/103 = 0.961, settled by the prior
    # but against its one worker's "absent" (the crowd alone: 0.2), so open; the others: 1 * 4, P = 0.8 (open)
    posterior, judged, crowd = summary_posteriors(batch, summary.pk, acus)
    assert posterior.tolist() == pytest.approx([76 / 77, 19 / 23, 1 / 197, 99 / 103] + [0.8] * (len(acus) - 4))
    assert judged.tolist() == [1] * len(acus)
    assert crowd.tolist() == pytest.approx([0.8, 0.2, 0.2, 0.2] + [0.8] * (len(acus) - 4))
    follow_up = batch.hits.get(follow_up=1)
    assert follow_up.acu_ids == [acus[1], acus[3], *acus[4:]]  # ACU 3 too: the judge never settles against the crowd
    # the summary's first worker is not handed its follow-up; a new worker gets only the open ACUs
    with pytest.raises(handout.NoWork):
        handout.next_assignment(a, batch)
    second = handout.next_assignment(b, batch)
    assert second.hit_id == follow_up.pk
    assert list(second.hit.task_acus().values_list("pk", flat=True)) == follow_up.acu_ids
    # b says ACUs 1 and 3 absent (1/4): odds 19/16 (P = 19/35) and 99/16 (P = 99/115 = 0.861) stay open;
    # the rest settle (16/17)
    submit_assignment(
        assignment_id=second.pk,
        worker_id=b.pk,
        answers={str(acu): acu not in (acus[1], acus[3]) for acu in follow_up.acu_ids},
    )
    third = batch.hits.get(follow_up=2)
    assert third.acu_ids == [acus[1], acus[3]]
    # the round's labels are the posteriors: ACUs 1 and 3 (P = 19/35, 99/115) are present though both
    # workers said absent; ACU 2 absent (1/197); the others 76/77 or 16/17, present
    table, _, pos, scores, _ = summary_scores_arrays(dataset, batch)
    assert table.ids[pos].tolist() == [summary.pk]
    assert scores.tolist() == pytest.approx([(len(acus) - 1) / len(acus)])
    # the same labels in a fixed round: the majority says ACUs 1 and 3 are absent
    fixed = one_hit_each(batch, "fixed")
    _, _, _, majority, _ = summary_scores_arrays(dataset, fixed)
    assert majority.tolist() == pytest.approx([(len(acus) - 3) / len(acus)])
    # the round's export carries the labels and score its scores read; the answers stay beside them
    row = exported(dataset, batch, summary)
    assert row["acu_labels"] == [1, 1, 0, 1] + [1] * (len(acus) - 4)
    assert row["acu"] == pytest.approx((len(acus) - 1) / len(acus))
    assert sorted(str(labels[:4]) for labels in row["annotator_labels"].values()) == [
        "[1, 0, 0, 0]",
        "[None, 0, None, 0]",
    ]
    assert exported(dataset, fixed, summary)["acu_labels"] == [1, 0, 0, 0] + [1] * (len(acus) - 4)
    # the same answers without the judge: ACUs 0 and 2 would be open after one worker too
    plain = pairs_batch(dataset, name="no judge")
    plain.hits.exclude(summary=summary).delete()
    one = handout.next_assignment(c, plain)
    submit_assignment(assignment_id=one.pk, worker_id=c.pk, answers=answers)
    assert plain.hits.get(follow_up=1).acu_ids == acus


@pytest.mark.django_db
def test_the_api_creates_a_pairs_batch_with_a_judge_prior_and_refuses_what_does_not_fit(lead):
    dataset = demo_dataset()
    summary = Summary.objects.filter(system__dataset=dataset).first()
    acu = summary.document.reference.acus.first()
    run = judge_run(dataset, {(summary.pk, acu.pk): 0.9})
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    body = {"dataset": dataset.pk, "allocation": "pairs", "allocation_min": 1, "allocation_judge_run": run.pk}
    created = api.post("/api/batches/", body, format="json")
    assert created.status_code == 201, created.content
    assert (created.json()["allocation"], created.json()["allocation_judge_run"]) == ("pairs", run.pk)
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[created.json()["id"]])).content.decode()
    assert "Adaptive by ACU" in page and f"the probability of judge run {run.pk}" in page
    other = judge_run(demo_dataset("other"), {})
    for bad, word in (
        ({"allocation_judge_run": run.pk}, "needs pairs allocation"),
        ({**body, "allocation_judge_run": other.pk}, "no run of the dataset"),
        ({**body, "provider": "prolific"}, "needs the in-house provider"),
    ):
        refused = api.post("/api/batches/", {"dataset": dataset.pk, **bad}, format="json")
        assert refused.status_code in (400, 422) and word in refused.content.decode(), refused.content
    assert Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD).count() == 1  # nothing half-written


@pytest.mark.django_db(transaction=True)
def test_parallel_submissions_of_a_summary_open_one_follow_up_each_time(no_refit):  # noqa: F811
    """Two places of each summary's first HIT submitted at once, disagreeing on every ACU: the
    decisions follow one another (the first HIT is locked), so each summary gets exactly one
    follow-up asking all its ACUs, never two and never none."""
    dataset = demo_dataset()
    batch = pairs_batch(dataset, allocation_min=2)
    batch.hits.exclude(pk__in=list(batch.hits.order_by("pk").values_list("pk", flat=True)[:6])).delete()
    workers = make_workers(12)
    taken = [(w, handout.next_assignment(w, batch)) for w in workers]
    assert sum(1 for _, a in taken if a is not None) == 12

    def submit(index, worker, assignment):
        acus = assignment.hit.task_acus().values_list("pk", flat=True)
        answers = {str(acu): index % 2 == 0 for acu in acus}
        submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
        return assignment.pk

    by_hit = {}
    for worker, assignment in taken:
        by_hit.setdefault(assignment.hit_id, []).append((worker, assignment))
    assert all(len(pair) == 2 for pair in by_hit.values())
    calls = [lambda i=i, w=w, a=a: submit(i, w, a) for pair in by_hit.values() for i, (w, a) in enumerate(pair)]
    results, errors = at_once(*calls)
    assert not errors and len(results) == 12
    for first in batch.hits.filter(follow_up=0):
        follow_ups = list(batch.hits.filter(summary_id=first.summary_id, follow_up__gt=0))
        assert len(follow_ups) == 1
        assert follow_ups[0].acu_ids == list(first.task_acus().values_list("pk", flat=True))
        assert (follow_ups[0].max_assignments, follow_ups[0].open_places) == (1, 1)
