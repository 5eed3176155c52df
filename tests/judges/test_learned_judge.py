"""The learned judge on tiny datasets built here: the training job (a Celery task, run eagerly)
with progress, its out-of-fold probabilities and stored model, reuse on another dataset, clear
refusals; a judge run whose system-level correlation CI includes 0 is refused for triage without
an explicit override; triage defaults to the learned judge."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.urls import reverse

from annotation.models import Reference
from config import extras
from hits.models import Batch, JudgeRun, Judgment, MachineJudgment
from hits.services.batches import BatchError
from hits.services.triage import create_triage_batch
from scoring import tasks
from scoring.machine import runs
from scoring.machine.data import human_labels, label_sources, load_pairs, reference_texts
from scoring.machine.features import FEATURE_NAMES, Featurizer
from scoring.machine.judges import learned as learned_judge
from scoring.machine.runs import run_judge_run, start_judge_run
from scoring.machine.selectors import triage_source
from scoring.runs.services import compute_scores
from scoring.stats import calibration, learned, triage_crossfit
from scoring.stats.machine_figures import TRIAGE_GRID

from ..conftest import PASSWORD
from .learned_data import QUALITY, tiny_dataset

pytestmark = pytest.mark.django_db


def _features(dataset):
    pairs = load_pairs(dataset)
    featurizer = Featurizer.over(list(pairs.summary_texts.values()) + reference_texts(dataset))
    return pairs, featurizer.matrix(pairs.texts(range(len(pairs))))


def test_training_job_stores_out_of_fold_probabilities_and_its_model(tmp_path, eager_celery, monkeypatch):
    dataset = tiny_dataset(tmp_path, "tiny", seed=1)
    run = start_judge_run(dataset, "learned")
    # The job's progress as the page reads it, after each fold's fit.
    seen, original = [], learned.cross_validated

    def watched(*args, progress, **options):
        def spy(done, total):
            progress(done, total)
            seen.append(JudgeRun.objects.values_list("progress", flat=True).get(pk=run.pk))

        return original(*args, progress=spy, **options)

    monkeypatch.setattr(learned, "cross_validated", watched)
    assert tasks.run_judge.delay(run.pk).get() == "done"
    assert len(seen) == 6 and seen == sorted(seen) and seen[0] > 0.6 and seen[-1] == pytest.approx(0.95)
    run.refresh_from_db()
    assert (run.status, run.progress, run.pairs_done, run.pairs_total) == ("done", 1.0, 320, 320)
    assert run.model == "logreg-features-v1" and run.calibration["target"] == "expert"
    # The model stored with the run: versioned, its features, coefficients and training set.
    fitted = run.fitted
    assert (fitted["format"], fitted["version"], fitted["features"]) == ("acu-learned-judge", 1, list(FEATURE_NAMES))
    assert len(fitted["coef"]) == len(FEATURE_NAMES) == len(fitted["mean"]) == len(fitted["scale"])
    training = fitted["training"]
    assert (training["pairs"], training["documents"], training["folds"], training["labels"]) == (320, 16, 5, "expert")
    # The stored probabilities are the out-of-fold ones: recomputed here by document-wise folds.
    pairs, X = _features(dataset)
    rows = MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "probability")
    stored = {(s, a): p for s, a, p in rows}
    keys = pairs.keys()
    probability = np.array([stored[k] for k in keys])
    labels = human_labels(dataset, kinds=Batch.EXPERT_KINDS)
    y = np.array([labels[k] for k in keys])
    cv = original(X, y, pairs.document)
    np.testing.assert_allclose(probability, cv["oof"], atol=1e-9)
    assert not np.allclose(probability, learned.predict(cv["fit"], X))  # not the fit on all labels
    np.testing.assert_allclose(fitted["coef"], cv["fit"]["coef"], atol=1e-9)
    figures = calibration.classification(y, probability)
    assert run.figures["classification"]["expert"]["auc"] == pytest.approx(figures["auc"])
    assert training["oof"]["auc"] == pytest.approx(figures["auc"]) and figures["auc"] > 0.85
    low, high = run.figures["classification"]["expert"]["ci"]["auc"]
    assert low <= figures["auc"] <= high
    assert run.figures["ranking"]["for_ranking"] is True
    assert training["figures"]["correlations"]["system"]["kendall"][0] > 0


def test_a_trained_model_judges_another_dataset(tmp_path):
    first = tiny_dataset(tmp_path, "first", seed=2)
    source = run_judge_run(start_judge_run(first, "learned").pk)
    other = tiny_dataset(tmp_path, "other", seed=3, documents=6)
    out = StringIO()
    call_command("judge_dataset", "other", "--judge", "learned", "--model-from", str(source.pk), "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["status"] == "done" and result["model"] == f"logreg-features-v1 from run {source.pk}"
    assert result["trained_on"]["run"] == source.pk and result["trained_on"]["dataset"] == "first"
    assert result["trained_on"]["oof"]["auc"] == source.fitted["training"]["oof"]["auc"]
    assert result["fitted"]["reused_from"] == source.pk and result["fitted"]["coef"] == source.fitted["coef"]
    # Its raw scores are the stored model's predictions on this dataset's features.
    run = JudgeRun.objects.get(pk=result["id"])
    pairs, X = _features(other)
    rows = MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "raw")
    raw = {(s, a): r for s, a, r in rows}
    keys = pairs.keys()
    np.testing.assert_allclose([raw[k] for k in keys], learned.predict(source.fitted, X), atol=1e-9)
    assert result["classification"]["expert"]["auc"] > 0.8
    with pytest.raises(CommandError, match="No finished learned judge run 99999"):
        call_command("judge_dataset", "other", "--judge", "learned", "--model-from", "99999")
    lexical = run_judge_run(start_judge_run(other, "lexical").pk)
    with pytest.raises(CommandError, match=f"No finished learned judge run {lexical.pk}"):
        call_command("judge_dataset", "other", "--judge", "learned", "--model-from", str(lexical.pk))
    with pytest.raises(CommandError, match="for the learned judge only"):
        call_command("judge_dataset", "other", "--judge", "lexical", "--model-from", str(source.pk))


def test_without_labels_or_time_the_run_fails_with_a_clear_message(tmp_path):
    bare = tiny_dataset(tmp_path, "bare", seed=4, documents=3, labels=False)
    run = run_judge_run(start_judge_run(bare, "learned").pk)
    assert run.status == "failed" and "trains on human labels and bare has none" in run.error
    assert not MachineJudgment.objects.filter(run=run).exists()
    labelled = tiny_dataset(tmp_path, "labelled", seed=5, documents=3)
    run = run_judge_run(start_judge_run(labelled, "learned", options={"time_budget": 1e-9}).pk)
    assert run.status == "failed" and "ran out of its time budget" in run.error


def test_projection_waits_for_enough_work_then_extrapolates_its_speed():
    assert learned_judge.projected_seconds(elapsed=120.0, share=0.04) is None  # too little of the work done
    assert learned_judge.projected_seconds(elapsed=10.0, share=0.5) is None  # too little time to measure a speed
    assert learned_judge.projected_seconds(elapsed=60.0, share=0.1) == pytest.approx(540.0)
    assert learned_judge.projected_seconds(elapsed=300.0, share=0.75) == pytest.approx(100.0)


class FakeClock:
    """The run's clock, moved by the test: the outcome does not depend on the machine's speed."""

    def __init__(self):
        self.now = 1000.0

    def perf_counter(self):
        return self.now


@pytest.mark.parametrize("budget, stops_early", [(600.0, True), (1500.0, False)])
def test_a_cross_encoder_that_cannot_finish_in_its_budget_stops_early(tmp_path, monkeypatch, budget, stops_early):
    """10 s per 1% of the cross-encoder's work: 1,000 s in all. With 600 s it stops once 5% of the
    work has shown its speed, not when the budget is spent; with 1,500 s it goes on to the end."""
    from scoring.machine import packed

    clock = FakeClock()
    monkeypatch.setattr(runs, "time", clock)
    monkeypatch.setattr(learned_judge, "time", clock)
    monkeypatch.setattr(extras, "missing", lambda feature: [])
    reached = []

    def fake_cross_validated(texts, labels, documents, labelled, *, progress, **options):
        for percent in range(1, 101):
            clock.now += 10.0
            reached.append(percent)
            progress(percent / 100, "training the cross-encoder of fold 1 of 4")
        raise ValueError("the fake cross-encoder has nothing to store")

    monkeypatch.setattr(packed, "cross_validated", fake_cross_validated)
    dataset = tiny_dataset(tmp_path, "slow", seed=6, documents=4)
    run = run_judge_run(start_judge_run(dataset, "learned", options={"cross_encoder": True, "time_budget": budget}).pk)
    assert run.status == "failed" and not MachineJudgment.objects.filter(run=run).exists()
    if stops_early:
        assert reached[-1] == 5
        assert "stopped early: at the speed of its first 5% (50 s)" in run.error
        assert "needs about 16 more minutes, beyond its time budget (10 min, 9 left)" in run.error
        assert "--ce-folds 2" in run.error and "JUDGE_TASK_TIME_LIMIT" in run.error
    else:
        assert reached[-1] == 100 and "cannot train its cross-encoder here" in run.error


def test_a_judge_not_for_ranking_is_refused_for_triage_without_override(tmp_path, client, lead):
    dataset = tiny_dataset(tmp_path, "coin", seed=6, documents=10, random_labels=True)
    Reference.objects.filter(document__dataset=dataset).update(status=Reference.Status.APPROVED)
    run = run_judge_run(start_judge_run(dataset, "learned").pk)
    kendall = run.figures["correlations"]["system"]["kendall"]
    assert kendall[1] <= 0 <= kendall[2]  # labels are coins: the CI includes 0
    assert run.figures["ranking"]["for_ranking"] is False
    with pytest.raises(BatchError, match="not for ranking"):
        create_triage_batch(run, confidence=0.6)
    compute_scores(dataset, n_resamples=100)
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk])).content.decode()
    assert "not for ranking" in page and 'name="override"' in page
    refused = client.post(reverse("judge_triage_batch", args=[dataset.pk, run.pk]), {"confidence": "0.6"}, follow=True)
    assert "not for ranking" in refused.content.decode() and not Batch.objects.filter(triage_run=run).exists()
    batch = create_triage_batch(run, confidence=0.6, allow_not_for_ranking=True)
    assert batch.triage_run_id == run.pk and batch.hits.exists()


def test_triage_defaults_to_the_learned_judge(tmp_path):
    dataset = tiny_dataset(tmp_path, "default", seed=7)
    learned_run = run_judge_run(start_judge_run(dataset, "learned").pk)
    lexical_run = run_judge_run(start_judge_run(dataset, "lexical").pk)  # newer
    assert lexical_run.figures["ranking"]["for_ranking"] is True
    assert triage_source(dataset) == learned_run
    out = StringIO()
    call_command("triage_report", "default", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["judge_run"] == learned_run.pk and report["ranking"]["for_ranking"] is True
    best = report["saved_at_tau_0_95"]
    assert best is None or all(r["system_kendall"] >= 0.95 for r in report["rows"] if r["c"] >= best["c"])


def test_triage_defaults_to_the_datasets_own_run_not_a_transferred_one(tmp_path):
    first = tiny_dataset(tmp_path, "first", seed=2)
    source = run_judge_run(start_judge_run(first, "learned").pk)
    other = tiny_dataset(tmp_path, "other", seed=7)
    own = run_judge_run(start_judge_run(other, "learned").pk)
    lexical = run_judge_run(start_judge_run(other, "lexical").pk)
    moved = run_judge_run(start_judge_run(other, "learned", options={"model_from": source.pk}).pk)  # newest
    assert moved.status == own.status == lexical.status == "done"
    assert moved.figures["ranking"]["for_ranking"] is True and own.figures["ranking"]["for_ranking"] is True
    assert triage_source(other) == own
    # Without an own learned run: the newest own run fit for ranking (the lexical), still not the transferred one.
    MachineJudgment.objects.filter(run=own).delete()
    own.delete()
    assert triage_source(other) == lexical
    # Only a transferred run fit for ranking: it is used rather than nothing.
    MachineJudgment.objects.filter(run=lexical).delete()
    lexical.delete()
    assert triage_source(other) == moved


def test_triage_report_cross_fits_its_threshold_off_the_documents_the_judge_trained_on(tmp_path):
    dataset = tiny_dataset(tmp_path, "gold", seed=8, documents=20)
    run = run_judge_run(start_judge_run(dataset, "learned", options={"train_share": 0.2}).pk)
    assert run.status == "done", run.error
    trained = run.calibration["trained_documents"]
    assert len(trained) == 4 and run.calibration["labelled_pairs"] == 4 * 5 * len(QUALITY)
    out = StringIO()
    call_command("triage_report", "gold", "--json", "--folds", "4", stdout=out)
    cross = json.loads(out.getvalue())["crossfit"]
    assert cross["left_out_documents"] == 4 and cross["held_out"]["documents"] == 16
    for fold in cross["folds"]:
        assert not set(fold["chosen_on"]) & set(fold["applied_to"])
        assert not set(fold["applied_to"]) & set(trained) and not set(fold["chosen_on"]) & set(trained)
    value, low, high = cross["held_out"]["saved_share"]
    assert low <= value <= high
    assert cross["held_out"]["system_kendall"] is None  # a handful of systems: no tau
    # The systems page reads the same figures, stored with the run.
    assert run.figures["triage_crossfit"]["held_out"]["saved_share"] == cross["held_out"]["saved_share"]
    with pytest.raises(CommandError, match="--folds is at least 2"):
        call_command("triage_report", "gold", "--folds", "1")


def test_the_run_suggests_its_triage_confidence_from_the_documents_it_trained_on_only(tmp_path):
    """figures.triage_suggestion (the c a lab gives its pairs batch): chosen on the training
    documents' out-of-fold probabilities; the other documents' labels never move it."""
    dataset = tiny_dataset(tmp_path, "gold", seed=8, documents=20)
    run = run_judge_run(start_judge_run(dataset, "learned", options={"train_share": 0.2}).pk)
    assert run.status == "done", run.error
    trained = run.calibration["trained_documents"]
    labels = label_sources(dataset)[run.calibration["target"]]
    rows = [
        r
        for r in MachineJudgment.objects.filter(run=run).values_list(
            "summary_id", "acu_id", "probability", "summary__document_id", "summary__system_id"
        )
        if r[3] in trained and (r[0], r[1]) in labels
    ]
    summary, acu, probability, document, system = (np.array(col) for col in zip(*rows, strict=True))
    human = np.array([labels[(s, a)] for s, a in zip(summary.tolist(), acu.tolist(), strict=True)])
    suggestion = run.figures["triage_suggestion"]
    by_hand = triage_crossfit.suggest(probability, human, summary, document, system)
    assert suggestion == {**by_hand, "chosen_on": suggestion["chosen_on"]} and suggestion["c"] is not None
    assert suggestion["documents"] == 4 and suggestion["chosen_on"] == "the documents the judge trained on"
    out = StringIO()
    call_command("triage_report", "gold", "--json", stdout=out)
    assert json.loads(out.getvalue())["suggestion"] == suggestion
    # The other 16 documents' labels all flipped: the report's suggestion does not move, its
    # in-sample grid (on every labelled document) does.
    others = Judgment.objects.filter(assignment__hit__summary__document__dataset=dataset).exclude(
        assignment__hit__summary__document_id__in=trained
    )
    assert others.update(present=ExpressionWrapper(Q(present=False), output_field=BooleanField()))
    again = StringIO()
    call_command("triage_report", "gold", "--json", stdout=again)
    moved = json.loads(again.getvalue())
    assert moved["suggestion"] == suggestion
    assert moved["rows"] != json.loads(out.getvalue())["rows"]


def test_a_run_never_suggests_a_confidence_a_pairs_batch_refuses():
    """A judge right and sure on every labelled pair keeps the agreement at every c of the triage
    grid, 0.5 too; the run suggests the smallest c a pairs batch's triage confidence takes (its
    field's limits, hits.batch_fields), never 0.5, which the batch form and the API refuse (review,
    issue 43)."""
    from hits.batch_fields import FIELDS, batch_form_field
    from scoring.machine.figures import suggestion_or_none

    human = np.array([True, False] * 20)
    probability = np.where(human, 0.97, 0.03)
    summary, document, system = np.arange(40) // 4, np.arange(40) // 8, np.arange(40) // 4 % 2
    suggestion = suggestion_or_none(probability, human, summary, document, system)
    field = FIELDS["triage_confidence"]
    assert suggestion["c"] == 0.6 and field.min <= suggestion["c"] <= field.max
    assert batch_form_field("triage_confidence").clean(str(suggestion["c"])) == 0.6
    assert suggestion["decided_share"] == 1.0
    # The grid the suggestion (and app+judge in bench/allocation_bench.py) chooses among is the
    # triage grid within that field's limits: one rule, held here.
    assert tuple(c for c in TRIAGE_GRID if field.min <= c <= field.max) == triage_crossfit.SUGGEST_GRID
