"""The nli judge is Lite2Pyramid: checked on a tiny random RoBERTa built in the test against a
direct transcription of Lite2Pyramid's metric/score.py on the same model (to 1e-6)."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset
from scoring.machine.data import load_pairs
from scoring.machine.judges import JudgeUnavailable, get_judge
from scoring.machine.judges.nli import entailment_index, lite2pyramid_from_logits

from ..conftest import DEMO_ROSE
from .tiny_nli import build_tiny_nli, lite2pyramid_transcription

pytestmark = pytest.mark.slow

pytest.importorskip("torch")
pytest.importorskip("transformers")

SUMMARIES = [
    "The council approved the new budget on Tuesday after a long debate about schools.",
    "Rain fell across the north; two roads were closed and a bridge was damaged by the flood waters. "
    * 6,  # > 400 tokens
    "A cat sat on the mat.",
]
UNITS = [
    ["The council approved a budget", "The debate was about schools", "It happened on Monday"],
    ["Roads were closed", "A bridge was damaged", "Nobody was hurt", "It rained in the north"],
    ["A cat sat somewhere"],
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_nli(tmp_path_factory.mktemp("tiny-nli"))


def _pairs():
    return [(unit, summary) for summary, units in zip(SUMMARIES, UNITS, strict=False) for unit in units]


def test_nli_judge_equals_lite2pyramid_transcription(tiny_model):
    expected = lite2pyramid_transcription(tiny_model, SUMMARIES, UNITS)
    judge = get_judge("nli", model_dir=tiny_model, batch_size=3)  # batches of another size and padding
    got = judge.scores(_pairs())
    for name in ("p2c", "p3c"):
        np.testing.assert_allclose(got[name], expected["pairs"][name], atol=1e-6, rtol=0)
    for name in ("l2c", "l3c"):
        assert got[name].tolist() == expected["pairs"][name].tolist()
    # The scores differ from pair to pair and from each other (the random model is not flat).
    assert np.ptp(got["p2c"]) > 0.05 and not np.allclose(got["p2c"], got["p3c"])
    np.testing.assert_allclose(judge.judge(_pairs()), expected["pairs"]["p2c"], atol=1e-6, rtol=0)
    assert judge.params["entailment_index"] == 0 and judge.params["entailment_index_from"] == "config"
    assert judge.params["max_length"] == 400


def test_truncation_at_400_tokens_matters(tiny_model):
    """The long summary is cut at 400 tokens: a transcription with 512 gives other scores."""
    judge = get_judge("nli", model_dir=tiny_model)
    long_pairs = [(u, SUMMARIES[1]) for u in UNITS[1]]
    at_400 = judge.scores(long_pairs)["p2c"]
    wider = lite2pyramid_transcription(tiny_model, [SUMMARIES[1]], [UNITS[1]], max_length=418)["pairs"]["p2c"]
    assert not np.allclose(at_400, wider, atol=1e-6)


def test_entailment_index_is_read_from_the_config(tmp_path):
    model_dir = build_tiny_nli(tmp_path, labels=("contradiction", "neutral", "entailment"), seed=3)
    judge = get_judge("nli", model_dir=model_dir)
    logits = judge.logits(_pairs())
    got = judge.scores(_pairs())
    assert judge.params["entailment_index"] == 2
    e, rest = logits[:, 2], logits[:, 0] + logits[:, 1]
    np.testing.assert_allclose(got["p2c"], 1 / (1 + np.exp(rest - e)), atol=1e-12)
    np.testing.assert_allclose(got["p3c"], np.exp(logits[:, 2]) / np.exp(logits).sum(axis=1), atol=1e-12)
    assert got["l3c"].tolist() == (logits.argmax(axis=1) == 2).astype(float).tolist()


def test_config_without_an_entailment_label_assumes_index_0():
    from transformers import RobertaConfig

    assert entailment_index(RobertaConfig(num_labels=3)) == (0, "assumed (no label named entailment in the config)")


def test_ties_go_to_entailment_as_torch_argmax():
    logits = np.array([[1.0, 0.5, 0.5], [0.0, 2.0, -1.0], [2.0, 2.0, 0.0]])
    scores = lite2pyramid_from_logits(logits)
    assert scores["l2c"].tolist() == [1.0, 0.0, 1.0]  # e == n + c counts as entailment
    assert scores["l3c"].tolist() == [1.0, 0.0, 1.0]  # the first maximum wins
    assert scores["p2c"][0] == pytest.approx(0.5)


def test_missing_model_directory_and_cuda_are_explained(tmp_path):
    ok, why = get_judge("nli").available()
    assert not ok and "--model-dir" in why
    ok, why = get_judge("nli", model_dir=str(tmp_path)).available()
    assert not ok and "no config.json" in why
    with pytest.raises(JudgeUnavailable, match="no config.json"):
        get_judge("nli", model_dir=str(tmp_path)).judge([("a", "b")])


def test_cuda_without_a_device_is_refused(tiny_model):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(JudgeUnavailable, match="no CUDA device"):
        get_judge("nli", model_dir=tiny_model, device="cuda").judge([("a", "b")])


@pytest.mark.django_db
def test_judge_dataset_nli_reports_lite2pyramid_raw_scores(tiny_model):
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    dataset = Dataset.objects.get(name="demo")
    out = StringIO()
    call_command("judge_dataset", "demo", "--judge", "nli", "--model-dir", tiny_model, "--json", stdout=out)
    run = json.loads(out.getvalue())
    assert run["status"] == "done" and run["judge"] == "nli" and run["params"]["max_length"] == 400
    scores = StringIO()
    call_command("compute_scores", "demo", "--json", "--resamples", "200", stdout=scores)
    machine = json.loads(scores.getvalue())["machine"]
    assert [m["id"] for m in machine] == [run["id"]]
    pairs = load_pairs(dataset)
    names = dict(dataset.systems.values_list("pk", "name"))
    for sid, name in names.items():
        mine = [i for i in range(len(pairs)) if pairs.system[i] == sid]
        summary_ids = list(dict.fromkeys(int(pairs.summary[i]) for i in mine))
        summaries = [pairs.summary_texts[s] for s in summary_ids]
        units = [[pairs.acu_texts[i] for i in mine if pairs.summary[i] == s] for s in summary_ids]
        expected = lite2pyramid_transcription(tiny_model, summaries, units)["means"]
        got = machine[0]["systems"][name]
        for key in ("p2c", "l2c", "p3c", "l3c"):
            assert got[key] == pytest.approx(expected[key], abs=1e-6), (name, key)
        assert 0 <= got["machine"] <= 1 and got["human"] is not None
