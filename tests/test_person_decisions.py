"""A decision about a person needs gold evidence with a confidence bound (the product's rule):
the workers table flags a worker (listed first, counted in α without the flagged, beside Exclude
and Block) only when gold shows them below the mark with 95% confidence; agreement with the
other workers' majority and speed are shown as information, never a flag."""

from types import SimpleNamespace

import pytest
from django.test import Client
from django.urls import reverse
from scipy import stats

from hits.allocation.service import stop_at_chance
from hits.models import Assignment, Judgment, WorkerEstimate
from hits.qualification_bound import below_on_gold
from hits.services import handout
from scoring.machine import qc as machine_qc
from scoring.runs.selectors import latest_run, run_part
from scoring.runs.workers import worker_flags

from .crowd_data import demo_dataset, published_batch, scored, work_all
from .test_allocation_pairs_app import judge_run
from .test_handout import make_workers

CROWD = SimpleNamespace(is_expert=False)


def gold(correct: int, total: int) -> dict:
    return {"gold_correct": correct, "gold_total": total}


def test_failed_gold_needs_the_bound_not_the_point_estimate():
    assert worker_flags(CROWD, gold(3, 5)) == []  # 60% on 5 gold answers: the upper 95% bound is 0.92
    assert worker_flags(CROWD, gold(0, 2)) == []  # 2 wrong of 2: too few to flag anyone
    assert worker_flags(CROWD, gold(0, 5)) == ["failed gold"]  # upper bound 0.45
    assert worker_flags(CROWD, gold(3, 10)) == ["failed gold"]  # upper bound 0.61
    assert worker_flags(SimpleNamespace(is_expert=True), gold(0, 10)) == []
    assert not below_on_gold(0, 0, 0.7)


def test_a_worker_at_the_mark_is_flagged_on_gold_at_most_5_percent():
    """The flag's bound is a confidence bound (Clopper-Pearson): a worker right 70% of the time on
    gold is flagged below 0.7 at most 5% of the time, on any number of gold labels (5 to 100
    here, exactly: binomial). The credible bound before (uniform prior) flagged them up to 9.9%
    of the time (on 9 labels); so 2 right of 6 (33%) is no flag now (bound 0.73; 0.66 before)."""
    for total in range(5, 101):
        flagged = sum(stats.binom.pmf(k, total, 0.7) for k in range(total + 1) if below_on_gold(k, total, 0.7))
        assert flagged <= 0.05, (total, flagged)
    assert not below_on_gold(2, 6, 0.7) and below_on_gold(1, 6, 0.7)


@pytest.mark.django_db
def test_only_bounded_gold_evidence_flags_a_worker(lead):
    """No gold HITs in the round: a worker whom the two others outvote on every ACU reads "low
    agreement" as information and is not flagged; of the two others, 3 of 5 right on gold (60%,
    a point estimate under 0.7) is not flagged, 0 of 10 is."""
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=3)
    a, b, lone = make_workers(3, prefix="outvoted")
    for worker, present in ((a, True), (b, True), (lone, False)):
        work_all(worker, batch, present)
    for worker, correct, total in ((a, 3, 5), (b, 0, 10)):  # their gold record, as a gold HIT stores it
        first = Assignment.objects.filter(worker=worker, hit__batch=batch).order_by("pk").first()
        Assignment.objects.filter(pk=first.pk).update(gold_correct=correct, gold_total=total)
    scored(dataset, batch)
    table = run_part(latest_run(dataset, batch), "workers")
    rows = {r["worker"]: r for r in table["rows"]}
    outvoted = rows[lone.external_id]
    assert outvoted["agreement"] == 0.0 and outvoted["gold_accuracy"] is None
    assert outvoted["flags"] == [] and "low agreement" in outvoted["notes"]
    assert rows[a.external_id]["gold_accuracy"] == 0.6 and rows[a.external_id]["flags"] == []
    assert rows[b.external_id]["flags"] == ["failed gold"]
    assert table["flagged"] == 1
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    cells = page.split(f'data-worker="{lone.external_id}"')[1].split("</tr>")[0]
    assert 'class="badge flag"' not in cells and "low agreement" in cells
    assert "Only gold evidence flags a worker" in page


@pytest.mark.django_db
def test_a_worker_stopped_at_chance_gets_no_more_of_the_batch():
    """The adaptive stop (gold shows the worker near chance: 0 of 15 present gold ACUs said present,
    15 of 15 absent ones said absent) takes the worker off the batch's handout, though it does not
    exclude them everywhere; another batch still hands them work."""
    dataset = demo_dataset()
    batch = published_batch(dataset, allocation="adaptive", stop_after=20, name="stopping")
    other = published_batch(dataset, name="other")
    stopped, fresh = make_workers(2, prefix="chance")
    gold_record = {"positives": 15, "said_present": 0, "negatives": 15, "said_absent": 15}
    WorkerEstimate.objects.create(
        batch=batch,
        worker=stopped,
        sensitivity=0.5,
        specificity=0.5,
        gold_judged=30,
        chance_upper=0.05,
        gold=gold_record,
    )
    assert stop_at_chance(batch) == [stopped.pk]
    stopped.refresh_from_db()
    assert not stopped.excluded  # a stop is no exclusion
    with pytest.raises(handout.NoWork):
        handout.next_assignment(stopped, batch)
    assert handout.next_assignment(fresh, batch).hit.batch_id == batch.pk  # the batch still has work
    assert handout.next_assignment(stopped, other).hit.batch_id == other.pk


@pytest.mark.django_db
def test_the_machine_qc_mark_reads_as_a_note_never_as_a_flag(lead):
    """The judge and the other workers' majority are no gold evidence, so their Machine QC mark
    ("disagrees with crowd and machine") is information only, as the page and docs/scoring.md say.
    It was drawn as the red flag badge of "failed gold", beside Exclude and Block: now it reads as a
    note, as "low agreement" does."""
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=3)
    a, b, lone = make_workers(3, prefix="judged")
    for worker, present in ((a, True), (b, True), (lone, False)):
        work_all(worker, batch, present)
    pairs = Judgment.objects.filter(assignment__worker=lone).values_list("assignment__hit__summary_id", "acu_id")
    judge_run(dataset, dict.fromkeys(pairs, 0.99))  # sure every fact is present, as the majority says
    scored(dataset, batch)
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    cells = page.split(f'data-worker="{lone.external_id}"')[1].split("</tr>")[0]
    assert machine_qc.FLAG in cells and "badge flag" not in cells
    assert run_part(latest_run(dataset, batch), "workers")["flagged"] == 0
