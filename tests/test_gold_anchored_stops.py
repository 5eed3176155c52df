"""Stops and flags that need gold (issue 42, items 1-2): in an in-house adaptive batch with the
default allocation, gold in it and the stop switched on, two accounts answering one pseudo-random
function of the ACU id (no reading) and one honest worker answering the expert labels work
through the pages; the honest worker is not stopped, the pair is flagged with its evidence, a
stop applies to its batch only, and the lead lifts stops and flags by POST."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from hits import versions
from hits.allocation.service import lift_stop, stop_at_chance
from hits.collusion import CollusionFlag
from hits.gold import known_answers
from hits.models import Assignment, Judgment, Worker, WorkerEstimate
from hits.selectors import counted_judgments
from hits.services import handout
from hits.services.submission import read_token, submit_assignment
from scoring.runs.data import load_judgments
from scoring.runs.services import compute_scores
from scoring.runs.worker_estimates import refit_estimates

from .crowd_data import all_answers, demo_dataset, published_batch, scored, work_all
from .test_handout import make_workers

pytestmark = pytest.mark.django_db


def colluded(acu_id: int) -> bool:
    """The colluders' shared answer: a fixed pseudo-random bit of the ACU id."""
    return (acu_id * 2654435761) % 4093 % 2 == 1


@pytest.mark.portable
def test_colluders_are_flagged_and_the_honest_worker_is_not_stopped(make_user, lead, settings):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (1000, 1000)  # a whole batch's work in seconds
    dataset = demo_dataset()
    batch = published_batch(dataset, allocation="adaptive", gold_share=0.3, stop_after=20)  # allocation defaults
    truth = known_answers(dataset)
    assert batch.hits.filter(gold_answers__isnull=False).count() >= 10

    def acus_of(token):
        assignment = Assignment.objects.select_related("hit").get(pk=read_token(token)[0])
        return assignment.hit.summary_id, [int(a) for a in all_answers(assignment)]

    def honest(token):
        summary, acus = acus_of(token)
        return {str(a): truth[summary][a] for a in acus}

    def colluder(token):
        _, acus = acus_of(token)
        return {str(a): colluded(a) for a in acus}

    clients = {}
    for k, name in enumerate(("colluder-a", "colluder-b", "honest-h")):
        clients[name] = Client(REMOTE_ADDR=f"10.0.0.{k + 1}")
        clients[name].force_login(make_user(name, "worker"))
    while sum(  # the three take turns, one task each, as a crowd works a batch over time
        work_through_pages_once(clients[n], colluder if n.startswith("colluder") else honest) for n in clients
    ):
        pass
    refit_estimates(batch.pk)  # the last refit (the submissions refitted as they came)
    workers = {w.external_id: w for w in Worker.objects.filter(external_id__in=clients)}
    estimates = {e.worker.external_id: e for e in WorkerEstimate.objects.filter(batch=batch).select_related("worker")}
    honest_estimate = estimates["honest-h"]
    assert honest_estimate.stopped_at is None
    assert honest_estimate.gold_judged >= 20 and honest_estimate.chance_upper > 0.8
    assert all(estimates[c].chance_upper < 0.6 for c in ("colluder-a", "colluder-b"))
    flags = list(CollusionFlag.objects.filter(batch=batch, lifted_at__isnull=True))
    assert {(f.first_id, f.second_id) for f in flags} == {
        tuple(sorted((workers["colluder-a"].pk, workers["colluder-b"].pk)))
    }
    assert flags[0].agreed == flags[0].common >= 20 and flags[0].explained < 0.8
    assert not any(w.excluded for w in workers.values())  # no one is excluded everywhere by the app
    # the batch page shows the flag with its evidence; the lead lifts it
    page = Client()
    page.force_login(lead)
    html = page.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "Possible collusion" in html and f"same answer on {flags[0].agreed} of {flags[0].common}" in html
    assert "No worker stopped." in html or "honest-h" not in html.split('id="stops"')[-1].split("</ul>")[0]
    compute_scores(dataset, batch)  # the workers page reads the round's scoring run
    workers_page = page.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    for name in ("colluder-a", "colluder-b"):
        assert (
            f"possible collusion in batch {batch.pk}"
            in workers_page.split(f'data-worker="{name}"')[1].split("</tr>")[0]
        )
    assert "possible collusion" not in workers_page.split('data-worker="honest-h"')[1].split("</tr>")[0]
    lifted = page.post(
        reverse("batch_worker_action", args=[batch.pk, "lift-flag"]),
        {"worker": flags[0].first_id, "flag": flags[0].pk},
    )
    assert lifted.status_code == 302
    assert CollusionFlag.objects.get(pk=flags[0].pk).lifted_at is not None
    refit_estimates(batch.pk)  # lifted: not flagged again in this batch
    assert not CollusionFlag.objects.filter(batch=batch, lifted_at__isnull=True).exists()
    assert "flag lifted" in page.get(reverse("batch_detail", args=[batch.pk])).content.decode()


def work_through_pages_once(client: Client, answer) -> int:
    """One task through the worker pages (1), or none left for this worker (0)."""
    reply = client.post(reverse("work_next"))
    assert reply.status_code == 302
    if "/task/" not in reply["Location"]:
        return 0
    assert client.get(reply["Location"]).status_code == 200
    token = re.search(r"/task/([^/]+)/", reply["Location"]).group(1)
    sent = client.post(
        reverse("task_submit", args=[token]), {"answers": answer(token)}, content_type="application/json"
    )
    assert sent.status_code == 200 and sent.json()["ok"], sent.content
    return 1


def _stop_fixture():
    """Two batches of one dataset worked by a careful worker and an always-"present" one; gold
    in the first."""
    dataset = demo_dataset()
    truth = known_answers(dataset)
    first = published_batch(dataset, allocation="adaptive", gold_share=0.5, stop_after=20, name="with gold")
    second = published_batch(dataset, assignments=2, name="other")
    careful, spammer, newcomer = make_workers(3, prefix="gold")
    for batch in (first, second):
        for worker in (careful, spammer):
            while True:
                try:
                    assignment = handout.next_assignment(worker, batch)
                except handout.NoWork:
                    break
                summary = assignment.hit.summary_id
                answers = (
                    {a: truth[summary][int(a)] for a in all_answers(assignment)}
                    if worker == careful
                    else all_answers(assignment, present=True)
                )
                submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
    return dataset, first, second, careful, spammer, newcomer


@pytest.mark.portable
def test_a_stop_needs_gold_applies_to_its_batch_only_and_can_be_lifted(lead, eager_celery):
    dataset, first, second, careful, spammer, _ = _stop_fixture()
    refit_estimates(first.pk)
    estimates = {e.worker_id: e for e in WorkerEstimate.objects.filter(batch=first)}
    stop = estimates[spammer.pk]
    assert stop.stopped_at is not None and stop.chance_upper < 0.2 and stop.gold_judged >= 20
    assert f"{stop.gold['said_absent']} of {stop.gold['negatives']} absent ones said absent" in stop.stop_reason
    assert estimates[careful.pk].stopped_at is None
    spammer.refresh_from_db()
    assert not spammer.excluded  # a stop is no exclusion
    # the spammer's judgments leave the first batch only
    mine = Judgment.objects.filter(assignment__worker=spammer)
    assert not counted_judgments(batch=first).filter(assignment__worker=spammer).exists()
    assert (
        counted_judgments(batch=second).filter(assignment__worker=spammer).count()
        == mine.filter(assignment__hit__batch=second).count()
    )
    everyone = load_judgments(dataset, include_excluded=True)
    left_out = set(everyone.ids[everyone.excluded].tolist())
    assert left_out == set(mine.filter(assignment__hit__batch=first).values_list("pk", flat=True))
    # the dataset's scope pools both batches: a worker who judged a pair in both counts once (latest)
    pairs = counted_judgments(dataset).values("assignment__hit__summary_id", "acu_id", "assignment__worker_id")
    assert len(load_judgments(dataset)) == pairs.distinct().count() < counted_judgments(dataset).count()
    # the lead reads the evidence and lifts the stop: the judgments count again, a new version
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[first.pk])).content.decode()
    assert spammer.external_id in page and "near chance on gold" in page and "Lift the stop" in page
    scored(dataset)  # the recompute the stop's write asked for after its commit (pages only read)
    workers_page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    row = workers_page.split(f'data-worker="{spammer.external_id}"')[1].split("</tr>")[0]
    assert f"stopped at chance in batch {first.pk}" in row and reverse("batch_detail", args=[first.pk]) in row
    before = versions.current(dataset.pk, first.pk)
    assert (
        client.post(reverse("batch_worker_action", args=[first.pk, "lift"]), {"worker": spammer.pk}).status_code == 302
    )
    assert versions.current(dataset.pk, first.pk) > before
    assert counted_judgments(batch=first).filter(assignment__worker=spammer).exists()
    refit_estimates(first.pk)  # lifted: never stopped again in this batch
    assert WorkerEstimate.objects.get(batch=first, worker=spammer).stopped_at is None
    assert not lift_stop(first, spammer.pk)


@pytest.mark.portable
def test_no_gold_no_stop_however_the_crowd_disagrees():
    """Without gold in the batch nobody is stopped, not even a worker the crowd outvotes everywhere."""
    dataset = demo_dataset()
    batch = published_batch(dataset, allocation="adaptive", allocation_min=3, allocation_max=3, stop_after=10)
    a, b, lone = make_workers(3, prefix="nogold")
    for worker, present in ((a, True), (b, True), (lone, False)):
        work_all(worker, batch, present)
    refit_estimates(batch.pk)
    estimate = WorkerEstimate.objects.get(batch=batch, worker=lone)
    assert estimate.judged >= 10 and estimate.gold_judged == 0
    assert estimate.sensitivity + estimate.specificity - 1 < 0.2  # the crowd's fit says "at chance" ...
    assert stop_at_chance(batch) == [] and estimate.stopped_at is None  # ... and that stops no one
    assert not WorkerEstimate.objects.filter(batch=batch, stopped_at__isnull=False).exists()
