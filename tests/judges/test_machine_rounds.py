"""Machine rounds on REALSumm with the lexical judge: stored as a round of their own,
calibrated out-of-fold by document, never mixed into the human majority or alpha; triage
batches and the triage report; the workers' machine QC."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dataset, Summary
from hits.models import HIT, Batch, JudgeRun, MachineJudgment
from hits.selectors import counted_judgments
from hits.services.batches import BatchError, publish_batch
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from hits.services.triage import create_triage_batch
from scoring.machine import qc as machine_qc
from scoring.machine.judges import get_judge
from scoring.machine.judges.lexical import stems
from scoring.machine.runs import JudgeRunError, start_judge_run
from scoring.runs.services import compute_scores, summary_scores_arrays
from scoring.stats import calibration, machine_figures

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_lexical_judge_counts_stemmed_content_words():
    judge = get_judge("lexical")
    assert stems("The cats were running to the houses") == ["cat", "run", "hous"]
    values = judge.judge(
        [
            ("The cats were running home", "A cat runs to his home."),  # cat, run, home: all found
            ("Obama won the election", "The vote was held."),  # none
            ("Police arrested two men", "Two men were seen by police"),  # polic, two, men of polic, arrest, two, men
            ("the of and", "anything"),  # no content word
        ]
    )
    assert values.tolist() == [1.0, 0.0, 0.75, 0.0]
    with pytest.raises(Exception, match="takes no options"):
        get_judge("lexical", device="cpu")


def test_logistic_fit_and_metrics_match_scikit_learn():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import (
        balanced_accuracy_score,
        cohen_kappa_score,
        roc_auc_score,
    )

    rng = np.random.default_rng(4)
    x = rng.random(400)
    y = rng.random(400) < 0.2 + 0.6 * x
    slope, intercept = calibration.fit_logistic(x, y)
    reference = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(x[:, None], y)
    assert slope == pytest.approx(reference.coef_[0, 0], abs=1e-6)
    assert intercept == pytest.approx(reference.intercept_[0], abs=1e-6)
    p = calibration.predict(x, slope, intercept)
    figures = calibration.classification(y, p)
    assert figures["auc"] == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(y, p >= 0.5), abs=1e-12)
    assert figures["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, p >= 0.5), abs=1e-12)
    assert sklearn.__version__


def test_folds_keep_each_document_in_one_fold():
    documents = np.repeat(np.arange(23), 7)
    folds = calibration.document_folds(documents, k=5)
    for d in range(23):
        assert len(set(folds[documents == d].tolist())) == 1
    assert sorted(set(folds.tolist())) == [0, 1, 2, 3, 4]
    counts = np.bincount(folds) // 7
    assert counts.max() - counts.min() <= 1


def test_out_of_fold_probabilities_come_from_the_other_folds():
    rng = np.random.default_rng(1)
    documents = np.repeat(np.arange(20), 10)
    x = rng.random(200)
    y = (rng.random(200) < x).astype(float)
    cv = calibration.cross_validated(x, y, documents, k=4)
    for fold, (slope, intercept) in zip(np.unique(cv["folds"]), cv["fold_fits"], strict=False):
        test = cv["folds"] == fold
        assert (slope, intercept) == calibration.fit_logistic(x[~test], y[~test])
        np.testing.assert_allclose(cv["oof"][test], calibration.predict(x[test], slope, intercept))


@pytest.fixture
def realsumm(realsumm_path):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    return Dataset.objects.get(name="realsumm")


def _judge(name="realsumm", *args):
    out = StringIO()
    call_command("judge_dataset", name, "--judge", "lexical", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_judge_dataset_lexical_on_realsumm(realsumm):
    human_before = compute_scores(realsumm, n_resamples=200).outputs
    judgments_before = counted_judgments(realsumm).count()
    result = _judge()
    run = JudgeRun.objects.get(pk=result["id"])
    # A round of its own, versioned, with every pair judged.
    assert run.batch.kind == Batch.Kind.MACHINE and run.batch.read_only
    assert (result["judge"], result["version"], result["model"]) == ("lexical", 1, "porter-overlap-v1")
    assert result["pairs"] == 26_400 == MachineJudgment.objects.filter(run=run).count()
    assert MachineJudgment.objects.filter(run=run, probability__isnull=True).count() == 0
    # Calibrated against the expert labels, 5 folds by document, every reported figure out-of-fold.
    assert run.calibration["target"] == "expert" and run.calibration["folds"] == 5
    assert run.calibration["labelled_pairs"] == 26_400
    expert = result["classification"]["expert"]
    assert expert["n"] == 26_400
    assert 0.6 < expert["accuracy"] < 0.95 and 0.7 < expert["auc"] < 0.95 and 0.3 < expert["kappa"] < 0.9
    assert expert["balanced_accuracy"] <= 1
    # Figures recomputed from the stored probabilities agree with the report.
    rows = list(MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "probability"))
    truth = {
        (j.assignment.hit.summary_id, j.acu_id): j.present
        for j in counted_judgments(realsumm).select_related("assignment__hit")
    }
    y = np.array([truth[(s, a)] for s, a, _ in rows])
    p = np.array([r[2] for r in rows])
    assert calibration.classification(y, p)["accuracy"] == pytest.approx(expert["accuracy"], abs=1e-12)
    # Correlations with the human ACU scores at both levels, with CIs.
    for level in ("summary", "system"):
        for method in ("pearson", "spearman", "kendall"):
            value, low, high = result["correlations"][level][method]
            assert low <= value <= high and value > 0.3
    # Per system: machine beside human, the human one being exactly the released label score.
    assert result["systems"]["abs_bart_out"]["human"] == pytest.approx(0.48349483849483854, abs=1e-12)
    # Never mixed into the human figures.
    assert counted_judgments(realsumm).count() == judgments_before
    human_after = compute_scores(realsumm, n_resamples=200).outputs
    assert human_after["alpha"] == human_before["alpha"] and human_after["systems"] == human_before["systems"]
    assert human_after["counts"] == human_before["counts"]
    # compute_scores --json carries the run beside the human scores.
    out = StringIO()
    call_command("compute_scores", "realsumm", "--json", "--resamples", "100", stdout=out)
    scores = json.loads(out.getvalue())
    assert scores["machine"][0]["id"] == run.pk and scores["machine"][0]["calibrated_on"] == "expert"
    assert scores["machine"][0]["systems"]["abs_bart_out"]["human"] == pytest.approx(
        scores["systems"]["abs_bart_out"]["acu"]
    )
    # A second run is version 2.
    assert _judge()["version"] == 2


def test_triage_report_rows_agree_with_a_direct_computation(realsumm):
    run = JudgeRun.objects.get(pk=_judge()["id"])
    out = StringIO()
    call_command("triage_report", "realsumm", "--judge-run", str(run.pk), "--grid", "0.8,0.9", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert [r["c"] for r in report["rows"]] == [0.8, 0.9] and report["labels"] == "expert"
    rows = list(
        MachineJudgment.objects.filter(run=run).values_list(
            "summary_id", "acu_id", "probability", "summary__system_id", "summary__document_id"
        )
    )
    truth = {
        (j.assignment.hit.summary_id, j.acu_id): j.present
        for j in counted_judgments(realsumm).select_related("assignment__hit")
    }
    for row in report["rows"]:
        c = row["c"]
        combined, human, systems = {}, {}, {}
        decided = 0
        for s, a, p, system, _ in rows:
            machine_decides = p >= c or p <= 1 - c
            decided += machine_decides
            label = (p >= 0.5) if machine_decides else truth[(s, a)]
            combined.setdefault(s, []).append(label)
            human.setdefault(s, []).append(truth[(s, a)])
            systems[s] = system
        assert row["saved_share"] == pytest.approx(decided / len(rows))
        per_system = {}
        for s, labels in combined.items():
            per_system.setdefault(systems[s], []).append((np.mean(labels), np.mean(human[s])))
        change = max(abs(np.mean([m for m, _ in v]) - np.mean([h for _, h in v])) for v in per_system.values())
        assert row["max_system_change"] == pytest.approx(change, abs=1e-12)
        assert row["agreement"] >= 1 - row["saved_share"]  # the crowd's pairs agree by construction
    assert report["rows"][0]["saved_share"] > report["rows"][1]["saved_share"]
    with pytest.raises(CommandError, match="between 0.5 and 1"):
        call_command("triage_report", "realsumm", "--judge-run", str(run.pk), "--grid", "0.3")
    with pytest.raises(CommandError, match="has no judge run 999999"):
        call_command("triage_report", "realsumm", "--judge-run", "999999")


def test_triage_batch_carries_only_uncertain_acus_and_scores_combine(realsumm):
    from annotation.models import Reference

    Reference.objects.filter(document__dataset=realsumm).update(status=Reference.Status.APPROVED)
    run = JudgeRun.objects.get(pk=_judge()["id"])
    with pytest.raises(BatchError, match="between 0.5 and 1"):
        create_triage_batch(run, confidence=0.4)
    systems = list(realsumm.systems.filter(name__in=["abs_bart_out", "ext_bart_out", "abs_t5_out_large"]))
    batch = create_triage_batch(run, confidence=0.8, assignments=3, systems=systems)
    assert batch.kind == Batch.Kind.CROWD and batch.triage_run == run and batch.status == Batch.Status.DRAFT
    probabilities = {
        (s, a): p
        for s, a, p in MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "probability")
    }
    chosen = set(Summary.objects.filter(system__in=systems).values_list("pk", flat=True))
    probabilities = {k: p for k, p in probabilities.items() if k[0] in chosen}
    uncertain = {k for k, p in probabilities.items() if 0.2 < p < 0.8}
    carried = set()
    for hit in HIT.objects.filter(batch=batch):
        assert hit.acu_count == len(hit.acu_ids) > 0
        assert list(hit.task_acus().values_list("pk", flat=True)) == hit.acu_ids
        carried |= {(hit.summary_id, a) for a in hit.acu_ids}
        bucket = (
            batch.buckets.get(min_acus__lte=hit.acu_count, max_acus__gte=hit.acu_count)
            if hit.acu_count <= 20
            else batch.buckets.get(max_acus=None)
        )
        assert hit.reward == bucket.reward
    assert carried == uncertain
    # The crowd answers only the uncertain ACUs; the round's scores add the machine's labels.
    batch = publish_batch(batch)
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=2)
    assert set(counted_judgments(realsumm, batch).values_list("assignment__hit__summary_id", "acu_id")) == uncertain
    run_scores = compute_scores(realsumm, batch, n_resamples=100)
    decided = run_scores.outputs["counts"]["machine_decided"]
    assert decided["pairs"] == len(probabilities) - len(uncertain) and decided["of"] == len(probabilities)
    assert decided["share"] == pytest.approx(1 - len(uncertain) / len(probabilities))
    table, judgments, pos, scores, _ = summary_scores_arrays(realsumm, batch)
    assert set(np.unique(judgments.worker).tolist()) == set(
        counted_judgments(realsumm, batch).values_list("assignment__worker_id", flat=True)
    )
    assert len(pos) == 300  # every summary of the three systems has a combined score
    # One summary by hand: crowd majority on its uncertain ACUs, machine labels elsewhere.
    hit = HIT.objects.filter(batch=batch).first()
    votes = {}
    for acu_id, present in (
        counted_judgments(realsumm, batch).filter(assignment__hit=hit).values_list("acu_id", "present")
    ):
        votes.setdefault(acu_id, []).append(present)
    acus = [a for (s, a) in probabilities if s == hit.summary_id]
    labels = [
        2 * sum(votes[a]) > len(votes[a]) if a in votes else probabilities[(hit.summary_id, a)] >= 0.5 for a in acus
    ]
    assert scores[list(table.ids[pos]).index(hit.summary_id)] == pytest.approx(np.mean(labels))
    # Alpha is the crowd's only (three workers on the uncertain pairs), not the machine's.
    assert run_scores.outputs["counts"]["workers"] == 3


def test_refusals_are_clear(realsumm, tmp_path):
    with pytest.raises(JudgeRunError, match="Unknown judge"):
        start_judge_run(realsumm, "oracle")
    with pytest.raises(JudgeRunError, match="--model-dir"):
        start_judge_run(realsumm, "nli")
    with pytest.raises(CommandError, match="for the nli judge only"):
        call_command("judge_dataset", "realsumm", "--judge", "lexical", "--model-dir", str(tmp_path))
    assert not JudgeRun.objects.exists() and not Batch.objects.filter(kind=Batch.Kind.MACHINE).exists()


def test_machine_round_is_no_human_round_and_never_freezes_acus(realsumm):
    run = JudgeRun.objects.get(pk=_judge()["id"])
    with pytest.raises(CommandError, match="is a machine round"):
        call_command("compute_scores", "realsumm", "--round", str(run.batch_id))
    with pytest.raises(JudgeRunError, match="crowd or expert round"):
        start_judge_run(realsumm, "lexical", label_round=run.batch)
    # An author may still delete an ACU the machine judged (not one the experts judged).
    from annotation.models import ACU

    acu = ACU.objects.filter(reference__document__dataset=realsumm).first()
    acu.judgments.all().delete()
    assert MachineJudgment.objects.filter(acu=acu).count() == 25
    acu.delete()
    assert not MachineJudgment.objects.filter(acu_id=acu.pk).exists()


def test_failed_run_leaves_no_judgments(realsumm, monkeypatch):
    from scoring.machine.judges import lexical

    def broken(self, pairs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(lexical.LexicalJudge, "scores", broken)
    with pytest.raises(CommandError, match="disk on fire"):
        _judge()
    run = JudgeRun.objects.get()
    assert run.status == JudgeRun.Status.FAILED and "disk on fire" in run.error
    assert not MachineJudgment.objects.exists()


def test_machine_qc_flags_only_disagreement_with_crowd_and_confident_machine():
    # Four pairs, three workers each; worker 9 contradicts the others and the machine on three.
    summary = np.repeat([1, 1, 2, 2], 3)
    acu = np.repeat([10, 11, 10, 11], 3)
    worker = np.tile([7, 8, 9], 4)
    present = np.array([1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    probability = np.repeat([0.95, 0.05, 0.97, 0.5], 3)  # the last pair: machine unsure
    counts = machine_qc.disagreement(summary, acu, worker, present, probability)
    assert counts[9] == (3, 3)
    # Workers 7 and 8 count only where the other two agree with the machine (pair 2); where they
    # split 1-1 (pairs 1 and 3) the others have no majority for the machine.
    assert counts[7] == (0, 1) and counts[8] == (0, 1)


def test_triage_grid_pure():
    probability = np.array([0.99, 0.01, 0.6, 0.4])
    human = np.array([True, False, False, True])
    rows = machine_figures.triage(
        probability, human, np.array([1, 1, 2, 2]), np.array([1, 1, 1, 1]), np.array([5, 5, 6, 6]), grid=(0.5, 0.9)
    )
    assert rows[0]["saved_share"] == 1.0 and rows[0]["agreement"] == 0.5
    assert rows[1]["saved_share"] == 0.5 and rows[1]["agreement"] == 1.0 and rows[1]["max_system_change"] == 0.0
