"""A `pairs` batch's triage held back until its gold round shows spammers (`triage_when` "spammers", issue 43;
hits/services/triage_when.py): every HIT whole until the gold HITs have their fixed places, then the triage
on (only for the HITs no worker was handed) if at least 5% of the gold-judged workers are at chance on gold,
off otherwise; the machine votes only where it is on and only on pairs no HIT carries."""

import importlib

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.allocation.policy import TRIAGE_SPAMMER_SHARE, share_at_chance, triage_on
from hits.batch_fields import BatchSpec
from hits.forms import BatchForm
from hits.models import HIT, Batch, MachineJudgment, WorkerEstimate
from hits.selectors.figures import batch_progress
from hits.services import handout
from hits.services.batches import BatchError, cost_estimate, publish_batch
from hits.services.estimate import estimate
from hits.services.submission import submit_assignment
from hits.services.triage_when import decide_triage, gold_round, state_text
from hits.triage import decided_pairs
from scoring.runs.triage import machine_votes
from scoring.runs.worker_estimates import refit_estimates

from .crowd_data import BATCH_FORM, batch_of, demo_dataset
from .test_allocation import allocation_bench, no_refit  # noqa: F401 - the fixture: no refit after a submission
from .test_handout import make_workers
from .test_pairs_triage import BUCKETS, C, acus_of, judge_run, not_for_ranking_run, triage_batch

pairs_policy = importlib.import_module("pairs_policy")  # bench/, on the path test_allocation sets


@pytest.mark.portable
def test_the_rule_reads_the_share_of_gold_judged_workers_at_chance():
    upper = [0.05, 0.5, 0.1, float("nan"), 0.9]
    judged = [25, 40, 19, 30, 20]  # the third is at chance but has too little gold; NaN: no gold fit
    assert share_at_chance(upper, judged, 20) == (pytest.approx(1 / 4), 1, 4)
    assert share_at_chance(upper, [5] * 5, 20) == (None, 0, 0)
    assert share_at_chance([], [], 20) == (None, 0, 0)
    assert TRIAGE_SPAMMER_SHARE == 0.05
    assert triage_on(0.05) and triage_on(1 / 3) and not triage_on(0.049) and not triage_on(0.0)
    assert not triage_on(None)  # nobody judged enough gold: every pair to the crowd
    # the bench decides with the same rule and threshold
    assert pairs_policy.PairSettings().spammer_share == TRIAGE_SPAMMER_SHARE
    assert allocation_bench.PairSettings(triage_when="spammers").spammer_share == 0.05


def held_back(dataset, run, **options):
    return triage_batch(dataset, run, triage_when="spammers", **options)


@pytest.mark.django_db
@pytest.mark.portable
def test_a_held_back_triage_makes_every_hit_whole_prices_it_whole_and_gives_no_machine_label():
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    for options, message in (
        (
            {"allocation": "pairs", "allocation_judge_run": run.pk, "triage_confidence": C, "triage_when": "spammers"},
            "needs gold HITs",
        ),
        ({"allocation": "pairs", "allocation_judge_run": run.pk, "triage_confidence": C}, "needs gold HITs"),
        ({"allocation": "pairs", "triage_when": "sometimes"}, "is one of: always, spammers"),
    ):
        with pytest.raises(BatchError, match=message):
            BatchSpec(**options)
    batch = held_back(dataset, run)
    assert (batch.triage_run_id, batch.triage_confidence, batch.triage_when) == (run.pk, C, "spammers")
    assert (batch.triage_state, batch.triage_decided_at, batch.machine_decides) == ("pending", None, False)
    for hit in batch.hits.select_related("summary__document__reference"):
        assert hit.acu_ids is None and hit.acu_count == len(acus_of(hit.summary))
    assert not batch.decided_summaries.exists() and len(machine_votes(batch)) == 0
    # the live estimate and the budget check count every HIT whole (the triage may never happen)
    spec = {"assignments": 3, "allocation": "pairs", "allocation_max": 3, "gold_share": 0.2, "buckets": BUCKETS}
    spec["allocation_judge_run"] = run.pk
    whole = estimate(dataset, BatchSpec(**spec))
    held = estimate(dataset, BatchSpec(**spec, triage_confidence=C))  # the default: spammers
    always = estimate(dataset, BatchSpec(**spec, triage_confidence=C, triage_when="always"))
    assert held == whole and always["total"] < whole["total"]
    assert cost_estimate(batch)["total"] == whole["total"]
    # today's triage (always) is unchanged: carried at creation, the machine's labels count
    today = triage_batch(dataset, run)
    assert (today.triage_when, today.triage_state, today.machine_decides) == ("always", "", True)
    assert all(h.acu_ids for h in today.hits.filter(gold_answers__isnull=True))
    assert len(machine_votes(today)) > 0
    # the default (spammers) on a batch without triage holds nothing back: stored as always, no state
    untriaged = batch_of(dataset, allocation="pairs", allocation_judge_run=run.pk, gold_share=0.2)
    assert (BatchSpec().triage_when, untriaged.triage_when, untriaged.triage_state) == ("spammers", "always", "")


def work(worker, batch, n: int, say) -> list[HIT]:
    """The worker takes and submits `n` tasks of the batch (gold first), answering `say(hit, acu id)`."""
    done = []
    for _ in range(n):
        assignment = handout.next_assignment(worker, batch)
        hit = assignment.hit
        answers = {str(a): say(hit, a) for a in hit.task_acus().values_list("pk", flat=True)}
        submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
        done.append(hit)
    return done


def right(hit, acu) -> bool:
    return bool(hit.gold_answers[str(acu)]) if hit.gold_answers else acu % 2 == 0


def everything_present(hit, acu) -> bool:
    return True


def hit_rows(batch) -> list:
    return sorted(batch.hits.values_list("pk", "summary_id", "acu_ids", "acu_count", "reward", "open_places"))


@pytest.mark.django_db
def test_spammers_on_gold_turn_the_triage_on_for_the_hits_no_worker_was_handed(no_refit, client, lead):  # noqa: F811
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    batch = publish_batch(held_back(dataset, run))
    gold_hits = batch.hits.filter(gold_answers__isnull=False).count()
    spammer, good, other = make_workers(3)
    # the spammer answers every gold HIT "present", then is handed a non-gold HIT before the gold round is bought
    first = work(spammer, batch, gold_hits + 1, everything_present)
    early = first[-1]
    assert early.gold_answers is None and early.follow_up == 0
    work(good, batch, gold_hits, right)
    refit_estimates(batch.pk)  # gold HITs still have a place open: nothing is decided
    batch.refresh_from_db()
    assert batch.triage_state == "pending" and decide_triage(batch.pk) is None
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    waiting = f"Triage: waiting for the gold round (0 of {gold_hits} gold HITs done)"
    assert api.get(f"/api/batches/{batch.pk}/").json()["triage"] == waiting
    work(other, batch, gold_hits, right)
    assert gold_round(batch).bought
    # the run is sure of every pair of one summary no worker was handed: its HIT goes, the summary is decided
    untouched = (
        batch.hits.filter(gold_answers__isnull=True, follow_up=0, assignments__isnull=True).order_by("pk").last()
    )
    MachineJudgment.objects.filter(run=run, summary_id=untouched.summary_id).update(probability=0.97)

    refit_estimates(batch.pk)  # the refit after the last gold submission decides, after the stop's evidence
    batch.refresh_from_db()
    assert (batch.triage_state, batch.machine_decides) == ("on", True) and batch.triage_decided_at is not None
    record = batch.triage_decision
    assert (record["at_chance"], record["judged"], record["after"]) == (1, 3, 20)
    assert record["share"] == pytest.approx(1 / 3) and record["threshold"] == 0.05
    spammer_estimate = WorkerEstimate.objects.get(batch=batch, worker=spammer)
    assert spammer_estimate.chance_upper < 0.2 and spammer_estimate.gold_judged >= 20

    decided = decided_pairs(run, C)
    hits = {h.summary_id: h for h in batch.hits.filter(follow_up=0).select_related("summary__document__reference")}
    handed = set(batch.hits.filter(assignments__isnull=False).values_list("summary_id", flat=True))
    assert early.summary_id in handed
    for summary_id, hit in hits.items():
        everything = acus_of(hit.summary)
        if hit.gold_answers or summary_id in handed:  # whole: gold, or handed out before the decision
            assert hit.acu_ids is None and hit.acu_count == len(everything), summary_id
        else:  # trimmed: only the pairs the run is unsure of
            assert hit.acu_ids == [a for a in everything if a not in decided.get(summary_id, set())]
            assert hit.acu_count == len(hit.acu_ids) and hit.open_places == hit.max_assignments == 1
    assert record["trimmed_hits"] == len(hits) + 1 - gold_hits - 1  # the HIT deleted counted too
    # the batch's places and open places follow the HITs kept (the tallies count the rows)
    assert batch_progress(batch)["places"] == sum(batch.hits.values_list("max_assignments", flat=True))

    assert untouched.summary_id not in hits and not HIT.objects.filter(pk=untouched.pk).exists()
    assert list(batch.decided_summaries.values_list("pk", flat=True)) == [untouched.summary_id]
    votes = machine_votes(batch)
    voted = set(zip(votes.summary.tolist(), votes.acu.tolist(), strict=True))
    trimmed = {s for s, h in hits.items() if not h.gold_answers and s not in handed} | {untouched.summary_id}
    expected = {(s, a) for s, acus in decided.items() for a in acus if s in trimmed}
    assert {(untouched.summary_id, a) for a in acus_of(untouched.summary)} <= voted
    assert voted == expected and expected
    assert not any(s == early.summary_id for s, _ in voted)  # the early HIT's pairs keep their crowd labels

    # written once: a second decision (or refit) changes nothing
    rows, when = hit_rows(batch), batch.triage_decided_at
    assert decide_triage(batch.pk) is None
    refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert hit_rows(batch) == rows and batch.triage_decided_at == when and batch.triage_state == "on"

    said = "Triage on: 1 of 3 workers with 20+ gold judgments is at chance on gold (33%; on from 5%)"
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert said in page and 'id="triage-state"' in page and 'id="triage-note"' not in page
    out = api.get(f"/api/batches/{batch.pk}/").json()
    assert (out["triage"], out["triage_state"], out["triage_when"]) == (said, "on", "spammers")
    assert out["triage_decision"]["at_chance"] == 1


@pytest.mark.django_db
def test_good_gold_answers_turn_the_triage_off_nothing_is_trimmed_and_no_machine_label_counts(
    no_refit,  # noqa: F811
    client,
    lead,
):
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    batch = publish_batch(held_back(dataset, run))
    gold_hits = batch.hits.filter(gold_answers__isnull=False).count()
    for worker in make_workers(3):
        work(worker, batch, gold_hits, right)
    rows = hit_rows(batch)
    assert all(acus is None for _, _, acus, _, _, _ in rows)  # every HIT whole before the decision
    refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert (batch.triage_state, batch.machine_decides) == ("off", False)
    assert batch.triage_decision["at_chance"] == 0 and batch.triage_decision["judged"] == 3
    assert hit_rows(batch) == rows and not batch.decided_summaries.exists()  # nothing trimmed
    assert len(machine_votes(batch)) == 0
    assert decide_triage(batch.pk) is None
    said = "Triage off: no worker is at chance on gold (0 of 3)"
    client.force_login(lead)
    assert said in client.get(f"/batches/{batch.pk}/").content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    assert api.get(f"/api/batches/{batch.pk}/").json()["triage"] == said


@pytest.mark.django_db
@pytest.mark.portable
def test_the_decision_reads_the_stored_gold_evidence_once_the_gold_round_is_bought(no_refit):  # noqa: F811
    """decide_triage on planted estimates: the batch's stop_after sets who counts; too little gold is off."""
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    batch = publish_batch(held_back(dataset, run, stop_after=50))
    gold_hits = batch.hits.filter(gold_answers__isnull=False).count()
    workers = make_workers(3)
    for worker in workers:
        work(worker, batch, gold_hits, right)
    for worker, upper in zip(workers, (0.05, 0.6, 0.7), strict=True):
        WorkerEstimate.objects.update_or_create(
            batch=batch,
            worker=worker,
            defaults={"sensitivity": 0.5, "specificity": 0.5, "chance_upper": upper, "gold_judged": 40, "gold": {}},
        )
    assert decide_triage(batch.pk) == "off"  # nobody has the 50 gold judgments the batch's stop asks
    batch.refresh_from_db()
    assert (batch.triage_decision["judged"], batch.triage_decision["after"]) == (0, 50)
    assert state_text(batch) == "Triage off: no worker has 50+ gold judgments (on from 5%)"
    assert decide_triage(batch.pk) is None  # decided: more gold evidence changes nothing
    WorkerEstimate.objects.filter(batch=batch).update(gold_judged=60)
    assert decide_triage(batch.pk) is None and Batch.objects.get(pk=batch.pk).triage_state == "off"


@pytest.mark.django_db
@pytest.mark.portable
def test_the_new_batch_form_offers_the_option_and_the_page_says_the_triage_waits(client, lead):
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    field = BatchForm(dataset=dataset).fields["triage_when"]
    assert [c for c, _ in field.choices] == ["always", "spammers"] and field.initial == "spammers"
    assert "on only if 5% or more of the workers with 20+ gold judgments are at chance on gold" in field.help_text
    client.force_login(lead)
    new = f"/datasets/{dataset.pk}/batches/new"
    assert "Pairs: when to triage" in client.get(new).content.decode()
    form = {
        **BATCH_FORM,
        "name": "held back",
        "gold_share": 0.2,
        "allocation": "pairs",
        "allocation_judge_run": run.pk,
        "triage_confidence": C,
        "triage_when": "spammers",
    }
    assert client.post(new, form).status_code == 302
    batch = Batch.objects.get(name="held back")
    assert (batch.triage_when, batch.triage_state) == ("spammers", "pending")
    gold_hits = batch.hits.filter(gold_answers__isnull=False).count()
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert f"Triage: waiting for the gold round (0 of {gold_hits} gold HITs done)" in page
    assert 'id="triage-note"' not in page  # the "HITs carry only ..." note of a triage made at creation
    refused = client.post(new, {**form, "name": "no gold", "gold_share": 0})
    assert refused.status_code == 400 and "needs gold HITs to read the crowd" in refused.content.decode()


@pytest.mark.django_db
@pytest.mark.portable
def test_a_held_back_triage_from_a_run_not_for_ranking_says_so_beside_its_state(client, lead):
    dataset = demo_dataset()
    run = not_for_ranking_run(dataset)
    batch = held_back(dataset, run, triage_allow_not_for_ranking=True)
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    state = page[page.index('id="triage-state"') : page.index("</p>", page.index('id="triage-state"'))]
    assert "Triage: waiting for the gold round" in state
    assert 'id="triage-verdict">The run alone is not for ranking' in state
    assert "check the round's scores against its gold documents" in state and 'id="triage-note"' not in page
