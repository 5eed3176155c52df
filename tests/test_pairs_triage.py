"""Triage inside a `pairs` batch (issue 43): its judge run (`allocation_judge_run`) decides, at the
batch's `triage_confidence`, the pairs of the non-gold HITs it is sure of; the gold HITs stay whole;
the round's labels are the judge's for the decided pairs and the posterior for the rest. And a
`pairs` batch's defaults are the setting it was measured with (1 first place, posterior 0.725)."""

import html
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Summary
from hits.allocation.policy import ADAPTIVE, FIXED, PAIRS
from hits.batch_fields import BatchSpec
from hits.forms import BatchForm
from hits.gold import known_answers
from hits.models import HIT, Batch, JudgeRun, Judgment, MachineJudgment
from hits.money import Bucket
from hits.services import handout
from hits.services.batches import BatchError, publish_batch
from hits.services.simulate import simulate_crowd
from hits.services.submission import submit_assignment
from hits.services.triage import create_triage_batch
from scoring.runs.data import load_judgments
from scoring.runs.services import scored_judgments, summary_scores_arrays
from scoring.runs.triage import decided_share

from .crowd_data import BATCH_FORM, batch_of, demo_dataset, scored
from .test_allocation import no_refit  # noqa: F401 - the fixture: no refit, the fallback estimates (0.8)
from .test_allocation_pairs_app import exported
from .test_handout import make_workers

C = 0.9
NOT_FOR_RANKING = (
    r"is not for ranking: system-level Kendall tau 0\.100, 95% CI \[-0\.200, 0\.400\] includes 0 .*"
    r"Pick another judge, or tick “Pairs: triage from a judge run marked not for ranking”"
)
# Pay by the ACUs a HIT carries: 1-3, 4-5, 6 or more.
BUCKETS = (Bucket(1, 3, Decimal("0.10")), Bucket(4, 5, Decimal("0.20")), Bucket(6, None, Decimal("0.30")))
# The judge's probability of a summary's i-th ACU (cycled): decided at 0.9 (0.95, 0.02, 0.08) or not (0.6, 0.3, 0.7).
CYCLE = (0.6, 0.95, 0.3, 0.7, 0.08, 0.02)
UNSURE = (0.6, 0.3, 0.7)


def pay(acus: int) -> Decimal:
    return next(b.reward for b in BUCKETS if b.holds(acus))


def acus_of(summary) -> list[int]:
    return list(summary.document.reference.acus.order_by("sentence__position", "position").values_list("pk", flat=True))


def judge_run(dataset, decided_summary) -> tuple[JudgeRun, dict]:
    """A finished, calibrated run judging every pair at CYCLE, but `decided_summary`, every pair of
    which it is sure of (0.97)."""
    machine = Batch.objects.create(dataset=dataset, name="learned", kind=Batch.Kind.MACHINE)
    run = JudgeRun.objects.create(
        batch=machine, judge="learned", status=JudgeRun.Status.DONE, calibration={"target": "expert"}
    )
    probability = {}
    for summary in Summary.objects.filter(system__dataset=dataset).select_related("document__reference"):
        for i, acu in enumerate(acus_of(summary)):
            probability[(summary.pk, acu)] = 0.97 if summary.pk == decided_summary else CYCLE[i % len(CYCLE)]
    MachineJudgment.objects.bulk_create(
        MachineJudgment(run=run, summary_id=s, acu_id=a, raw=p, probability=p) for (s, a), p in probability.items()
    )
    return run, probability


def not_for_ranking_run(dataset) -> JudgeRun:
    """A judge run sure of no summary whose system tau's CI reaches 0: alone, not for ranking."""
    run, _ = judge_run(dataset, None)
    run.figures = {"correlations": {"system": {"kendall": [0.1, -0.2, 0.4]}}}
    run.save()
    return run


def triage_batch(dataset, run, **options):
    return batch_of(
        dataset,
        name="pairs with triage",
        assignments=3,
        allocation=PAIRS,
        allocation_max=3,
        gold_share=0.2,
        seed=7,
        buckets=BUCKETS,
        allocation_judge_run=run.pk,
        triage_confidence=C,
        **{"triage_when": "always", **options},  # the triage from the start (the default waits for the gold round)
    )


@pytest.mark.django_db
@pytest.mark.portable
def test_the_judge_decides_only_non_gold_pairs_and_the_gold_hits_stay_whole():
    dataset = demo_dataset()
    untriaged = batch_of(dataset, allocation=PAIRS, gold_share=0.2, seed=7)  # the same gold draw, no triage
    gold = set(untriaged.hits.filter(gold_answers__isnull=False).values_list("summary_id", flat=True))
    plain = Summary.objects.filter(system__dataset=dataset).exclude(pk__in=gold).order_by("pk")
    assert gold and plain.count() > 1
    decided_summary = plain.first().pk
    run, probability = judge_run(dataset, decided_summary)
    batch = triage_batch(dataset, run)
    assert (batch.triage_run_id, batch.triage_confidence) == (run.pk, C)
    # the measured pairs defaults: nothing entered, 1 first place and the posterior 0.725
    assert (batch.allocation_min, batch.allocation_threshold) == (1, 0.725)

    hits = {h.summary_id: h for h in batch.hits.select_related("summary__document__reference")}
    answers = known_answers(dataset, list(gold))
    for summary_id in gold:  # whole: every ACU, the known answers, 3 places, first in the handout
        hit = hits.pop(summary_id)
        everything = acus_of(hit.summary)
        assert list(hit.task_acus().values_list("pk", flat=True)) == everything
        assert hit.acu_count == len(everything) and hit.reward == pay(len(everything))
        assert hit.gold_answers == {str(a): v for a, v in answers[summary_id].items()}
        assert (hit.max_assignments, hit.open_places, hit.priority) == (3, 3, 1)
    assert decided_summary not in hits  # every pair decided: no HIT, recorded as decided by the batch
    assert list(batch.decided_summaries.values_list("pk", flat=True)) == [decided_summary]
    assert set(hits) == set(plain.values_list("pk", flat=True)) - {decided_summary}
    for hit in hits.values():  # the ACUs at 0.6, 0.3 and 0.7 only, in reference order, paid by their count
        everything = acus_of(hit.summary)
        open_ = [a for i, a in enumerate(everything) if CYCLE[i % len(CYCLE)] in UNSURE]
        assert hit.acu_ids == open_ and hit.acu_count == len(open_)
        assert hit.reward == pay(len(open_))
        assert (hit.gold_answers, hit.max_assignments, hit.priority) == (None, 1, 0)
        assert list(hit.task_acus().values_list("pk", flat=True)) == open_
    # a triaged HIT is paid less than it would be whole
    assert any(pay(h.acu_count) < pay(len(acus_of(h.summary))) for h in hits.values())
    # the share the machine decided: every pair of the non-gold summaries at 0.95, 0.02, 0.08 or 0.97
    decided = [k for k, p in probability.items() if k[0] not in gold and not 0.1 < p < 0.9]
    assert decided_share(batch)["pairs"] == len(decided) and decided_share(batch)["of"] == len(probability)


def answer(worker_index: int, summary_id: int, acu_id: int) -> bool:
    """The simulated workers: every worker says present on a gold HIT; elsewhere a fixed function."""
    return (acu_id + worker_index) % 2 == 0


@pytest.mark.django_db
@pytest.mark.portable
def test_a_triage_pairs_rounds_labels_are_the_judges_where_it_decided_and_the_posterior_elsewhere(
    no_refit,  # noqa: F811
):
    dataset = demo_dataset()
    plain_summary = Summary.objects.filter(system__dataset=dataset).order_by("pk").last()
    run, probability = judge_run(dataset, decided_summary=None)
    batch = publish_batch(triage_batch(dataset, run))
    gold_hit = batch.hits.filter(gold_answers__isnull=False).order_by("pk").first()
    plain_hit = batch.hits.get(summary=plain_summary)
    assert plain_hit.gold_answers is None
    batch.hits.exclude(pk__in=[gold_hit.pk, plain_hit.pk]).delete()
    workers = make_workers(3)
    for index, worker in enumerate(workers):
        while True:
            try:
                assignment = handout.next_assignment(worker, batch)
            except handout.NoWork:
                break
            hit = assignment.hit
            shown = list(hit.task_acus().values_list("pk", flat=True))
            said = {str(a): True if hit.gold_answers else answer(index, hit.summary_id, a) for a in shown}
            submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=said)

    # the crowd judged only the pairs the judge left open on the non-gold HIT, every pair of the gold one
    plain_acus, gold_acus = acus_of(plain_summary), acus_of(gold_hit.summary)
    judged = set(
        Judgment.objects.filter(assignment__hit__batch=batch).values_list("assignment__hit__summary_id", "acu_id")
    )
    left_open = {
        (plain_summary.pk, a) for a, p in ((a, probability[(plain_summary.pk, a)]) for a in plain_acus) if 0.1 < p < 0.9
    }
    assert judged == left_open | {(gold_hit.summary_id, a) for a in gold_acus}

    # labels by hand: a judged pair's posterior odds are its prior odds times 4 per "present" and a
    # quarter per "absent" (the fallback 0.8, no refit); a decided pair's label is the judge's (P >= 0.5)
    votes: dict[tuple[int, int], list[bool]] = {}
    for s, a, present in Judgment.objects.filter(assignment__hit__batch=batch).values_list(
        "assignment__hit__summary_id", "acu_id", "present"
    ):
        votes.setdefault((s, a), []).append(present)

    def by_hand(key) -> bool:
        p = probability[key]
        if key not in votes:
            return p >= 0.5
        odds = p / (1 - p) * 4.0 ** (sum(votes[key]) - sum(not v for v in votes[key]))
        return odds > 1

    scored = scored_judgments(batch, load_judgments(dataset, batch))
    labels = {}
    for s, a, present in zip(scored.summary.tolist(), scored.acu.tolist(), scored.present.tolist(), strict=True):
        labels.setdefault((s, a), []).append(present)
    assert all(len(v) == 1 for v in labels.values())  # one vote per pair: the judge's or the posterior's
    for key in [(plain_summary.pk, a) for a in plain_acus] + [(gold_hit.summary_id, a) for a in gold_acus]:
        assert labels[key] == [by_hand(key)], key
    # a gold pair the judge is sure is absent (0.08) but its 3 workers say present: odds 0.087 * 64, present
    gold_08 = [(gold_hit.summary_id, a) for a in gold_acus if probability[(gold_hit.summary_id, a)] == 0.08]
    assert gold_08 and all(labels[k] == [True] and len(votes[k]) == 3 for k in gold_08)
    # a decided pair of the non-gold HIT is the judge's, though no worker saw it
    decided = [k for k in labels if k[0] == plain_summary.pk and k not in votes]
    assert decided and all(labels[k] == [probability[k] >= 0.5] for k in decided)

    table, _, pos, scores, _ = summary_scores_arrays(dataset, batch)
    score = dict(zip(table.ids[pos].tolist(), scores.tolist(), strict=True))
    assert score[plain_summary.pk] == pytest.approx(
        sum(by_hand((plain_summary.pk, a)) for a in plain_acus) / len(plain_acus)
    )
    # the round's export carries the same labels (the judge's where it decided), the answers beside them
    for summary, acus in ((plain_summary, plain_acus), (gold_hit.summary, gold_acus)):
        row = exported(dataset, batch, summary)
        assert row["acu_labels"] == [int(by_hand((summary.pk, a))) for a in acus]
        assert row["acu"] == pytest.approx(score[summary.pk])


@pytest.mark.django_db
@pytest.mark.portable
def test_triage_in_a_batch_refuses_what_does_not_fit(caplog):
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    pairs = {"allocation": PAIRS, "allocation_judge_run": run.pk, "triage_when": "always"}
    for options, message in (
        ({"triage_confidence": C}, "needs pairs allocation and its judge run"),
        ({"allocation": PAIRS, "triage_confidence": C}, "needs pairs allocation and its judge run"),
        ({"allocation": ADAPTIVE, "triage_confidence": C}, "needs pairs allocation and its judge run"),
        ({**pairs, "triage_confidence": 0.5}, "must be between 0.51 and 0.999"),
        ({**pairs, "triage_confidence": 1.0}, "must be between 0.51 and 0.999"),
        ({**pairs, "triage_allow_not_for_ranking": True}, "not for ranking is allowed only with triage"),
    ):
        with pytest.raises(BatchError, match=message):
            BatchSpec(**options)
    run.status = JudgeRun.Status.RUNNING
    run.save()
    with pytest.raises(BatchError, match="has not finished with calibrated probabilities"):
        batch_of(dataset, **pairs, triage_confidence=C)
    run.status = JudgeRun.Status.DONE
    run.save()
    MachineJudgment.objects.filter(run=run).update(probability=0.99)
    with pytest.raises(BatchError, match="decides every pair of the non-gold HITs: there is nothing for the crowd"):
        batch_of(dataset, **pairs, triage_confidence=C)
    assert not Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD).exists()  # nothing half-written
    MachineJudgment.objects.filter(run=run).update(probability=0.5)  # nothing decided: every HIT whole
    # a run "not for ranking" (its system-level tau's interval reaches 0): refused, as for a triage
    # batch, unless the lead allows it; then taken and logged
    run.figures = {"correlations": {"system": {"kendall": [0.1, -0.2, 0.4]}}}
    run.save()
    with pytest.raises(BatchError, match=NOT_FOR_RANKING):
        batch_of(dataset, **pairs, triage_confidence=C)
    assert not Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD).exists()  # nothing half-written
    with caplog.at_level("WARNING", logger="hits.triage"):
        batch = batch_of(dataset, **pairs, triage_confidence=C, triage_allow_not_for_ranking=True)
    assert "despite not for ranking" in caplog.text
    assert (batch.triage_run_id, batch.triage_allow_not_for_ranking) == (run.pk, True)
    assert all(h.acu_count == len(acus_of(h.summary)) for h in batch.hits.all())


@pytest.mark.django_db
@pytest.mark.portable
def test_a_pairs_batch_defaults_to_its_measured_setting_and_other_kinds_keep_theirs():
    assert (BatchSpec(allocation=PAIRS).policy.min_places, BatchSpec(allocation=PAIRS).policy.threshold) == (1, 0.725)
    for kind in (FIXED, ADAPTIVE):
        assert (BatchSpec(allocation=kind).policy.min_places, BatchSpec(allocation=kind).policy.threshold) == (2, 0.9)
    entered = BatchSpec(allocation=PAIRS, allocation_min=2, allocation_threshold=0.8).policy
    assert (entered.min_places, entered.threshold) == (2, 0.8)
    dataset = demo_dataset()
    batch = batch_of(dataset, allocation=PAIRS)
    assert (batch.allocation_min, batch.allocation_threshold) == (1, 0.725)
    assert set(HIT.objects.filter(batch=batch).values_list("max_assignments", flat=True)) == {1}
    adaptive = batch_of(dataset, allocation=ADAPTIVE)
    assert (adaptive.allocation_min, adaptive.allocation_threshold) == (2, 0.9)
    # the form leaves them empty (the kind's default) and says which default a kind takes
    form = BatchForm(dataset=dataset)
    for name in ("allocation_min", "allocation_threshold"):
        assert form.fields[name].initial is None and "pairs, as measured" in form.fields[name].help_text
    assert "1 first place, the posterior 0.725" in form.fields["allocation"].help_text


@pytest.mark.django_db
def test_the_api_creates_a_triage_pairs_batch_with_the_pairs_defaults_and_refuses_triage_without_a_judge(lead):
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    body = {"dataset": dataset.pk, "allocation": "pairs", "allocation_judge_run": run.pk, "triage_confidence": C}
    # the default waits for the gold round, so it needs gold HITs; with them the triage is pending
    refused = api.post("/api/batches/", body, format="json")
    assert refused.status_code == 422 and "needs gold HITs to read the crowd" in refused.content.decode()
    held = api.post("/api/batches/", {**body, "gold_share": 0.2}, format="json").json()
    assert (held["triage_when"], held["triage_state"]) == ("spammers", "pending")
    Batch.objects.filter(pk=held["id"]).delete()
    body["triage_when"] = "always"
    created = api.post("/api/batches/", body, format="json")
    assert created.status_code == 201, created.content
    out = created.json()
    assert (out["triage_confidence"], out["allocation_min"], out["allocation_threshold"]) == (C, 1, 0.725)
    batch = Batch.objects.get(pk=out["id"])
    assert batch.triage_run_id == run.pk and all(
        h.acu_count < len(acus_of(h.summary)) for h in batch.hits.filter(gold_answers__isnull=True)
    )
    for bad, status, word in (
        ({**body, "allocation_judge_run": None}, 422, "needs pairs allocation and its judge run"),
        ({**body, "triage_confidence": 1.5}, 400, "less than or equal to 0.999"),
    ):
        refused = api.post("/api/batches/", bad, format="json")
        assert refused.status_code == status and word in refused.content.decode(), refused.content
    assert Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD).count() == 1


@pytest.mark.django_db
@pytest.mark.portable
def test_the_form_lists_the_datasets_runs_with_probabilities_and_the_page_makes_a_triage_pairs_batch(client, lead):
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    unfinished, _ = judge_run(dataset, None)
    unfinished.status = JudgeRun.Status.RUNNING
    unfinished.save()
    uncalibrated, _ = judge_run(dataset, None)
    uncalibrated.calibration = {}
    uncalibrated.save()
    elsewhere, _ = judge_run(demo_dataset(name="another"), None)
    field = BatchForm(dataset=dataset).fields["allocation_judge_run"]
    assert [value for value, _ in field.choices] == ["", run.pk]  # none of the other three
    assert dict(field.choices)[run.pk] == f"run {run.pk}: learned v1"
    # With the confidence the run suggests for triage (figures.triage_suggestion), the list says it.
    for c, said in ((0.875, "triage suggested at 0.875"), (None, "no triage suggested")):
        JudgeRun.objects.filter(pk=run.pk).update(figures={"triage_suggestion": {"c": c}})
        field = BatchForm(dataset=dataset).fields["allocation_judge_run"]
        assert dict(field.choices)[run.pk] == f"run {run.pk}: learned v1, {said}"
    assert "the id of" not in field.help_text and "finished, calibrated judge run" in field.help_text
    form = {
        "name": "pairs from the page",
        **BATCH_FORM,
        "gold_share": 0.2,
        "allocation": PAIRS,
        "allocation_max": 3,
        "allocation_judge_run": run.pk,
        "triage_confidence": C,
        "triage_when": "always",
    }
    client.force_login(lead)
    for bad in (elsewhere.pk, uncalibrated.pk):  # not offered: refused by the form, nothing made
        page = client.post(f"/datasets/{dataset.pk}/batches/new", {**form, "allocation_judge_run": bad})
        assert page.status_code == 400 and "Select a valid choice" in page.content.decode()
    assert not Batch.objects.filter(name="pairs from the page").exists()
    response = client.post(f"/datasets/{dataset.pk}/batches/new", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    batch = Batch.objects.get(name="pairs from the page")
    assert (batch.allocation_judge_run_id, batch.triage_run_id, batch.triage_confidence) == (run.pk, run.pk, C)
    assert (batch.allocation_min, batch.allocation_threshold) == (1, 0.725)
    # the batch page says when the run alone is not fit for ranking (its system tau's interval reaches 0)
    assert 'id="triage-verdict"' not in client.get(f"/batches/{batch.pk}/").content.decode()
    run.figures = {"correlations": {"system": {"kendall": [0.1, -0.2, 0.4]}}}
    run.save()
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert 'id="triage-verdict">The run alone is not for ranking' in page


@pytest.mark.django_db
def test_the_systems_page_of_a_triage_pairs_round_says_the_posterior_decides_the_rest(client, lead):
    """In a pairs round the pairs the judge left to the crowd take their posterior, not the majority
    of their answers (review, issue 43); a triage batch of fixed places keeps the majority
    (tests/judges/test_judge_pages.py)."""
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    batch = publish_batch(triage_batch(dataset, run))
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=1)
    scored(dataset, batch)
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert 'id="machine-decided"' in page and "the crowd's posterior decides the rest" in page
    assert "majority decides" not in page


@pytest.mark.django_db
def test_the_page_and_the_api_refuse_triage_from_a_run_not_for_ranking_unless_the_lead_allows_it(client, lead):
    dataset = demo_dataset()
    run = not_for_ranking_run(dataset)
    form = {
        "name": "pairs from the page",
        **BATCH_FORM,
        "gold_share": 0,
        "allocation": PAIRS,
        "allocation_judge_run": run.pk,
        "triage_confidence": C,
        "triage_when": "always",
    }
    client.force_login(lead)
    new = f"/datasets/{dataset.pk}/batches/new"
    unticked = {k: v for k, v in form.items() if k != "triage_confidence"}
    for data, message in (
        (form, NOT_FOR_RANKING),
        ({**unticked, "triage_allow_not_for_ranking": "on"}, "not for ranking is allowed only with triage"),
    ):
        page = client.post(new, data)
        errors = page.context["form"].non_field_errors()
        assert page.status_code == 400 and len(errors) == 1 and re.search(message, errors[0]), errors
        assert html.escape(errors[0], quote=False) in page.content.decode()  # shown as it is, no stack trace
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()  # nothing half-made
    assert client.post(new, {**form, "triage_allow_not_for_ranking": "on"}).status_code == 302
    batch = Batch.objects.get(name="pairs from the page")
    assert (batch.triage_run_id, batch.triage_allow_not_for_ranking) == (run.pk, True)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert 'id="triage-verdict">The run alone is not for ranking' in page

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    body = {"dataset": dataset.pk, "allocation": "pairs", "allocation_judge_run": run.pk, "triage_confidence": C}
    body["triage_when"] = "always"
    for bad, status, field, message in (
        (body, 422, "error", NOT_FOR_RANKING),
        ({**body, "triage_allow_not_for_ranking": "maybe"}, 400, "fields", "Must be true or false."),
        (
            {**body, "triage_confidence": None, "triage_allow_not_for_ranking": True},
            422,
            "error",
            "not for ranking is allowed only with triage",
        ),
    ):
        refused = api.post("/api/batches/", bad, format="json")
        assert refused.status_code == status and re.search(message, str(refused.json()[field])), refused.content
    assert Batch.objects.filter(kind=Batch.Kind.CROWD).count() == 1
    created = api.post("/api/batches/", {**body, "triage_allow_not_for_ranking": True}, format="json")
    assert created.status_code == 201, created.content
    assert (created.json()["triage_allow_not_for_ranking"], created.json()["triage_confidence"]) == (True, C)
    assert Batch.objects.get(pk=created.json()["id"]).triage_run_id == run.pk


@pytest.mark.django_db
@pytest.mark.portable
def test_a_pair_the_run_has_no_probability_for_goes_to_the_crowd_in_both_triages():
    dataset = demo_dataset()
    run, probability = judge_run(dataset, decided_summary=None)
    summary = Summary.objects.filter(system__dataset=dataset).order_by("pk").last()
    acus = acus_of(summary)
    sure = next(a for i, a in enumerate(acus) if CYCLE[i % len(CYCLE)] not in UNSURE)  # decided at 0.9
    MachineJudgment.objects.filter(run=run, summary=summary, acu_id=sure).delete()  # e.g. an ACU added later
    expected = [a for i, a in enumerate(acus) if CYCLE[i % len(CYCLE)] in UNSURE or a == sure]
    in_pairs = triage_batch(dataset, run).hits.filter(summary=summary).first()
    standalone = create_triage_batch(run, confidence=C).hits.get(summary=summary)
    for hit in (in_pairs, standalone):
        assert hit is not None and hit.acu_ids == expected and hit.acu_count == len(expected)


@pytest.mark.django_db
@pytest.mark.portable
def test_the_judges_labels_count_on_the_batchs_summaries_only_and_its_saving_counts_the_triage():
    """A triage batch over some references: the round's machine labels, its decided share and its
    scores stay on the summaries it covers (its HITs' and those it decided wholly), never the
    dataset's others; the batch page's saving is against fixed allocation on each of those
    summaries with all its ACUs (the triage's saving included) and its settled HITs leave gold out."""
    from hits.allocation.service import figures

    dataset = demo_dataset()
    references = [d.reference for d in dataset.documents.order_by("position")[:2]]
    covered = Summary.objects.filter(document__reference__in=references)
    decided_summary = covered.order_by("pk").last().pk
    run, probability = judge_run(dataset, decided_summary)
    batch = batch_of(
        dataset,
        assignments=3,
        allocation=PAIRS,
        buckets=BUCKETS,
        allocation_judge_run=run.pk,
        triage_confidence=C,
        triage_when="always",
        references=references,
    )
    assert set(batch.hits.values_list("summary_id", flat=True)) | {decided_summary} == set(
        covered.values_list("pk", flat=True)
    )
    mine = set(covered.values_list("pk", flat=True))
    scored = scored_judgments(batch, load_judgments(dataset, batch))
    assert set(scored.summary.tolist()) == mine  # the others had machine labels before
    share = decided_share(batch)
    assert share["of"] == sum(1 for s, _ in probability if s in mine)
    assert share["pairs"] == sum(1 for (s, _), p in probability.items() if s in mine and not 0.1 < p < 0.9)
    # What the page says: a first place on each HIT against 3 whole HITs on each covered summary.
    out = figures(batch)
    whole = sum(3 * pay(len(acus_of(s))) for s in covered.select_related("document__reference"))
    spent = sum(h.max_assignments * h.reward for h in batch.hits.all())
    assert out["saved"] == whole - spent and out["fixed_places"] == 3 * len(mine)
    assert (out["gold_hits"], out["settling_hits"]) == (0, batch.hits.count())


@pytest.mark.django_db
@pytest.mark.portable
def test_creating_a_triage_batch_reads_its_judge_run_once():
    """create_batch takes the judge run its plan read (batch_plan.plan), not a second read of it."""
    dataset = demo_dataset()
    run, _ = judge_run(dataset, Summary.objects.filter(system__dataset=dataset).order_by("pk").first().pk)
    table = JudgeRun._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        batch = triage_batch(dataset, run)
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"]]
    assert batch.triage_run_id == run.pk
    assert len(reads) == 1, reads


@pytest.mark.django_db
@pytest.mark.portable
def test_the_aggregation_comparison_of_a_triage_round_reads_the_rounds_labels():
    """The systems page's *Majority vote and Dawid–Skene* table says its majority column is the
    scores above. In a triage round those count the judge's labels where it decided; the table
    recomputed a majority of the human answers alone, so every pair the judge decided present
    counted as absent and the column sat below the leaderboard."""
    from scoring.runs.services import compute_scores

    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    batch = publish_batch(triage_batch(dataset, run))
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=1)
    for aggregation in ("majority", "dawid-skene"):
        outputs = compute_scores(dataset, batch, n_resamples=50, aggregation=aggregation).outputs
        comparison = outputs["aggregations"]["systems"]
        assert comparison.keys() == outputs["systems"].keys()
        for name, system in outputs["systems"].items():
            assert comparison[name][aggregation] == pytest.approx(system["acu"], abs=1e-12), (aggregation, name)
