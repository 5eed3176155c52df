"""One judge interface (issue 41): a judge run calls `fit` then `predict` on every judge, the
registry is the one place that knows a judge by its name, and each judge takes its own options.
A judge that trains, unknown to the run's code, runs through the same path as the learned one."""

import re
from pathlib import Path

import numpy as np
import pytest

from hits.models import JudgeRun, MachineJudgment
from scoring.machine import judges, reports, selectors
from scoring.machine.calibration import labelled, target
from scoring.machine.judges import Judge, JudgeUnavailable, Prediction, judge_options
from scoring.machine.judges.lexical import LexicalJudge
from scoring.machine.runs import JudgeRunError, run_judge_run, start_judge_run
from scoring.machine.selectors import triage_source

from .learned_data import tiny_dataset

ROOT = Path(__file__).resolve().parent.parent.parent


class ThresholdJudge(Judge):
    """A toy judge that trains: the lexical overlap, cut at the threshold that best splits the
    labelled pairs; it calibrates itself (the share of present pairs on each side of the cut)."""

    name = "threshold"
    trains = True

    def __init__(self, step: float = 0.1):
        super().__init__(model="overlap-threshold", params={"step": float(step)})
        self.lexical = LexicalJudge()
        self.fitted: dict = {}

    def fit(self, work):
        name = target(work.labels)
        if name is None:
            raise JudgeUnavailable("The threshold judge trains on human labels.")
        has, y = labelled(work.pairs, work.labels[name])
        self.overlap = self.lexical.scores(work.pairs.texts(range(len(work.pairs))))["p"]
        cuts = np.arange(0.0, 1.0, self.params["step"])
        accuracy = [np.mean((self.overlap[has] >= c) == y) for c in cuts]
        cut = float(cuts[int(np.argmax(accuracy))])
        above = self.overlap[has] >= cut
        self.fitted = {
            "cut": cut,
            "target": name,
            "p_above": float(y[above].mean()) if above.any() else 1.0,
            "p_below": float(y[~above].mean()) if (~above).any() else 0.0,
        }
        work.progress(0.5)

    def predict(self, work):
        f = self.fitted
        probability = np.where(self.overlap >= f["cut"], f["p_above"], f["p_below"])
        record = {"target": f["target"], "scale": "threshold", "fit": {"cut": f["cut"]}}
        return Prediction({"p": self.overlap}, probability=probability, calibration=record)

    def model_to_store(self, figures):
        return {**self.fitted, "auc": figures["classification"][self.fitted["target"]]["auc"]}


@pytest.fixture
def threshold_registered(monkeypatch):
    real = judges.judge_class

    def judge_class(name):
        return ThresholdJudge if name == "threshold" else real(name)

    for module in (judges, reports, selectors):  # the registry, and those who ask it
        monkeypatch.setattr(module, "judge_class", judge_class)
    monkeypatch.setattr(judges, "JUDGE_NAMES", (*judges.JUDGE_NAMES, "threshold"))
    monkeypatch.setattr(judges, "RUN_JUDGE_NAMES", (*judges.RUN_JUDGE_NAMES, "threshold"))


@pytest.mark.django_db
def test_a_judge_that_trains_runs_through_fit_and_predict_like_any(tmp_path, threshold_registered):
    dataset = tiny_dataset(tmp_path, "toy", seed=3)
    with pytest.raises(JudgeRunError, match="Invalid options for the threshold judge"):
        start_judge_run(dataset, "threshold", options={"folds": 3})
    run = run_judge_run(start_judge_run(dataset, "threshold", options={"step": 0.05}).pk)
    assert run.status == JudgeRun.Status.DONE, run.error
    # Its own calibration is the run's, its model is stored with the run's figures.
    assert run.calibration["scale"] == "threshold" and run.calibration["target"] == "expert"
    cut = run.fitted["cut"]
    assert 0 < cut < 1 and run.fitted["auc"] == run.figures["classification"]["expert"]["auc"] > 0.8
    stored = MachineJudgment.objects.filter(run=run)
    assert stored.count() == run.pairs_total == run.pairs_done > 0
    above = {round(p, 9) for p in stored.filter(raw__gte=cut).values_list("probability", flat=True)}
    below = {round(p, 9) for p in stored.filter(raw__lt=cut).values_list("probability", flat=True)}
    assert above == {round(run.fitted["p_above"], 9)} and below == {round(run.fitted["p_below"], 9)}
    # Triage prefers a judge that trains over a newer one that does not, by what it is, not its name.
    lexical = run_judge_run(start_judge_run(dataset, "lexical").pk)
    assert lexical.figures["ranking"]["for_ranking"] and run.figures["ranking"]["for_ranking"]
    assert triage_source(dataset) == run


@pytest.mark.django_db
def test_a_judge_that_does_not_train_is_calibrated_by_the_run(tmp_path):
    dataset = tiny_dataset(tmp_path, "plain", seed=4)
    run = run_judge_run(start_judge_run(dataset, "lexical").pk)
    assert run.status == JudgeRun.Status.DONE and run.fitted == {}
    assert run.calibration["scale"] == "linear" and set(run.calibration["fit"]) == {"slope", "intercept"}


def test_each_judge_takes_its_own_options():
    given = {"model_dir": "/m", "device": "cpu", "model_from": "", "cross_encoder": False, "batch_size": None}
    assert judge_options("nli", given) == ({"model_dir": "/m", "device": "cpu"}, [])
    assert judge_options("lexical", given) == ({}, ["model_dir", "device"])
    assert judge_options("learned", {**given, "model_from": 7}) == ({"model_from": 7}, ["model_dir", "device"])
    assert judges.judges_taking("model_dir") == ["nli"] and judges.judges_taking("cross_encoder") == ["learned"]
    with pytest.raises(JudgeUnavailable, match="cross_encoder trains a new model"):
        judges.get_judge("learned", model_from=3, cross_encoder=True)
    with pytest.raises(JudgeUnavailable, match="no longer offered"):
        judges.run_judge("embedding")


def test_no_module_outside_the_registry_branches_on_a_judge_name():
    """Outside scoring/machine/judges/, no code compares a judge's name with a literal."""
    pattern = re.compile(r"""judge["'\]]*\s*(==|!=|\bin\b|\bnot in\b)\s*[("']""")
    sources = [p for p in ROOT.glob("scoring/**/*.py") if "judges" not in p.relative_to(ROOT).parts[:3]]
    assert pattern.search('if run.judge == "learned":') and pattern.search('if data["judge"] in ("nli",):')
    branching = [str(p.relative_to(ROOT)) for p in sources if pattern.search(p.read_text(encoding="utf-8"))]
    assert len(sources) > 50 and branching == []
