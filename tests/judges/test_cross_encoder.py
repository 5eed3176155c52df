"""The learned judge's packed cross-encoder (scoring/machine/packed.py), on a tiny random BERT
and tokenizer built in the test (nothing downloaded) standing in for the packaged
all-MiniLM-L6-v2: a packed ACU scores as it does alone; the training job (a Celery task, run
eagerly) trains one model per fold of documents and scores only the held-out documents with it,
stacks its logit with the features and stores the weights with the run; `--model-from` reuses
them (hash checked); without torch everything refuses with the install line."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from config import extras
from hits.models import Batch, JudgeRun, MachineJudgment
from scoring import tasks
from scoring.machine.data import human_labels, load_pairs, reference_texts
from scoring.machine.features import FEATURE_NAMES, Featurizer
from scoring.machine.runs import JudgeRunError, start_judge_run
from scoring.stats import learned

from .learned_data import tiny_dataset
from .tiny_bert import build_tiny_bert

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from scoring.machine import packed  # noqa: E402 - after the importorskip


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture
def tiny_packaged(tiny_base, monkeypatch, settings, tmp_path):
    """The tiny BERT in place of the packaged model, and a judge-models folder of the test."""
    monkeypatch.setattr(packed, "packaged_base", lambda: tiny_base)
    settings.JUDGE_MODELS_DIR = tmp_path / "judge-models"
    return tiny_base


SUMMARY = "The council approved the new budget on Tuesday after a long debate about schools; 12 voted no."
ACUS = ["The council approved a budget", "The debate was about schools", "It happened on Monday", "12 voted no"]


def test_a_packed_acu_scores_as_it_does_alone(tiny_base):
    tokenizer, encoder = packed.load_base(tiny_base)
    model = packed.make_model(encoder)
    with torch.no_grad():
        model.head.weight.normal_(0, 1.0)
    model.eval()
    packer = packed.Packer(tokenizer)
    pairs = [(a, SUMMARY) for a in ACUS] + [("A cat sat", "A cat sat on the mat.")]
    together = packed.score(model, packer, pairs)
    alone = np.array([packed.score(model, packer, [pair])[0] for pair in pairs])
    assert len(packer.packs(pairs)) == 2  # one pack per summary, all four ACUs in the first
    np.testing.assert_allclose(together, alone, atol=1e-5, rtol=0)
    assert np.ptp(together) > 1e-3  # the scores differ from ACU to ACU: the check can fail
    # Packs split when too long, and the scores stay the same.
    narrow = packed.Packer(tokenizer, max_pack_tokens=len(packer.summary_ids(SUMMARY)) + 40)
    assert len(narrow.packs(pairs)) > 2
    np.testing.assert_allclose(packed.score(model, narrow, pairs), alone, atol=1e-5, rtol=0)
    # Without the packing mask (every token seeing every other) the ACUs would see each other.
    batch = packed.collate(packer.packs(pairs[:4]))
    batch["mask"] = torch.zeros_like(batch["mask"])
    with torch.no_grad():
        leaky = model(batch).numpy()
    assert np.max(np.abs(leaky - alone[:4])) > 1e-3


def _features(dataset):
    pairs = load_pairs(dataset)
    featurizer = Featurizer.over(list(pairs.summary_texts.values()) + reference_texts(dataset))
    return pairs, featurizer.matrix(pairs.texts(range(len(pairs))))


def test_training_job_trains_out_of_fold_by_document_stacks_and_stores(
    tmp_path, tiny_packaged, eager_celery, monkeypatch
):
    dataset = tiny_dataset(tmp_path, "tiny", seed=1)
    run = start_judge_run(dataset, "learned", options={"cross_encoder": True, "ce_folds": 2, "ce_epochs": 1})
    assert run.model == "logreg-features-v1+packed-minilm-l6-ce" and run.judge_version.endswith("packed-ce-v1")
    trained, scored, seen = [], [], []
    original_train, original_score = packed.train, packed.score

    def spy_train(model, packer, pairs, labels, rows, **options):
        trained.append({pairs[r][1] for r in rows})
        tick = options.pop("tick")

        def watched(n):
            tick(n)
            seen.append(JudgeRun.objects.values_list("progress", flat=True).get(pk=run.pk))

        return original_train(model, packer, pairs, labels, rows, tick=watched, **options)

    def spy_score(model, packer, pairs, rows=None, **options):
        scored.append({pairs[r][1] for r in rows})
        return original_score(model, packer, pairs, rows, **options)

    cross_validated, original_cv = [], packed.cross_validated

    def spy_cv(*args, **options):
        out = original_cv(*args, **options)
        cross_validated.append(out["logit"])
        return out

    monkeypatch.setattr(packed, "cross_validated", spy_cv)
    monkeypatch.setattr(packed, "train", spy_train)
    monkeypatch.setattr(packed, "score", spy_score)
    assert tasks.run_judge.delay(run.pk).get() == "done"
    run.refresh_from_db()
    # Two folds by document: each model trains on half the documents' summaries and scores the rest.
    assert len(trained) == len(scored) == 2
    assert not trained[0] & scored[0] and not trained[1] & scored[1]
    assert trained[0] == scored[1] and trained[1] == scored[0]
    assert seen == sorted(seen) and seen[0] > 0.1 and seen[-1] <= 0.9
    # The stacked model: the features and the cross-encoder's logit, coefficients for all.
    fitted = run.fitted
    assert fitted["features"] == [*FEATURE_NAMES, "cross_encoder_logit"] and len(fitted["coef"]) == 17
    ce = fitted["cross_encoder"]
    assert (ce["format"], ce["version"], ce["folds"], ce["epochs"]) == ("acu-packed-cross-encoder", 1, 2, 1)
    assert (ce["lr"], ce["batch_tokens"]) == (packed.DEFAULT_LR, packed.DEFAULT_BATCH_TOKENS)  # the training's settings
    folder = tmp_path / "judge-models" / ce["path"]
    assert ce["path"] == f"run-{run.pk}" and packed.digest(folder) == ce["sha256"] and ce["bytes"] > 0
    assert 0 <= ce["oof"]["auc"] <= 1 and fitted["training"]["pairs"] == 320
    # The stored probabilities are the logistic regression's out-of-fold ones over the stacked
    # columns: recomputed from the features and the cross-encoder logits the job scored.
    pairs, X = _features(dataset)
    models, tokenizer = packed.load(folder, ce["sha256"])
    assert len(models) == 2
    rows = MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "probability")
    probability = {(s, a): p for s, a, p in rows}
    keys = pairs.keys()
    labels = human_labels(dataset, kinds=Batch.EXPERT_KINDS)
    y = np.array([labels[k] for k in keys])
    assert len(cross_validated) == 1
    stacked = learned.cross_validated(np.column_stack([X, cross_validated[0]]), y, pairs.document)
    np.testing.assert_allclose([probability[k] for k in keys], stacked["oof"], atol=1e-9)
    np.testing.assert_allclose(fitted["coef"], stacked["fit"]["coef"], atol=1e-9)


def test_a_stored_cross_encoder_is_reused_with_model_from(tmp_path, tiny_packaged, django_capture_on_commit_callbacks):
    tiny_dataset(tmp_path, "first", seed=2, documents=8)
    out = StringIO()
    call_command(
        "judge_dataset", "first", "--judge", "learned", "--cross-encoder", "--time-budget", "600", "--json", stdout=out
    )
    source = JudgeRun.objects.get(pk=json.loads(out.getvalue())["id"])
    assert source.status == "done" and "cross_encoder" in source.fitted
    other = tiny_dataset(tmp_path, "other", seed=3, documents=4)
    out = StringIO()
    call_command("judge_dataset", "other", "--judge", "learned", "--model-from", str(source.pk), "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["status"] == "done" and result["fitted"]["reused_from"] == source.pk
    assert result["model"] == f"logreg-features-v1+packed-minilm-l6-ce from run {source.pk}"
    assert result["params"]["features"][-1] == "cross_encoder_logit"
    assert result["trained_on"]["run"] == source.pk
    # Its raw scores: the stored regression on this dataset's features and the mean logit of the
    # stored fold cross-encoders, computed here from the files.
    pairs, X = _features(other)
    folder = tmp_path / "judge-models" / source.fitted["cross_encoder"]["path"]
    models, tokenizer = packed.load(folder)
    logit = packed.mean_logit(models, tokenizer, pairs.texts(range(len(pairs))))
    expected = learned.predict(source.fitted, np.column_stack([X, logit]))
    rows = MachineJudgment.objects.filter(run_id=result["id"]).values_list("summary_id", "acu_id", "raw")
    raw = {(s, a): r for s, a, r in rows}
    keys = pairs.keys()
    np.testing.assert_allclose([raw[k] for k in keys], expected, atol=1e-6)
    assert np.ptp(logit) > 0
    # A changed weights file is refused, not used.
    weights = folder / packed.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:-1] + b"\x00")
    with pytest.raises(CommandError, match="has changed since it was stored"):
        call_command("judge_dataset", "other", "--judge", "learned", "--model-from", str(source.pk))
    with pytest.raises(CommandError, match="--cross-encoder trains a new model"):
        call_command("judge_dataset", "other", "--judge", "learned", "--model-from", str(source.pk), "--cross-encoder")
    with pytest.raises(CommandError, match="for the learned judge only"):
        call_command("judge_dataset", "other", "--judge", "lexical", "--cross-encoder")
    with pytest.raises(CommandError, match="--ce-epochs goes with --cross-encoder"):
        call_command("judge_dataset", "other", "--judge", "learned", "--ce-epochs", "3")
    with pytest.raises(CommandError, match="ce_folds at least 2"):
        call_command("judge_dataset", "other", "--judge", "learned", "--cross-encoder", "--ce-folds", "1")
    # Deleting the run that reused the model leaves the source's files; deleting the source removes them.
    with django_capture_on_commit_callbacks(execute=True):
        JudgeRun.objects.filter(pk=result["id"]).delete()
    assert folder.is_dir()
    with django_capture_on_commit_callbacks(execute=True):
        JudgeRun.objects.filter(pk=source.pk).delete()
    assert not folder.exists()


@pytest.fixture
def torch_missing(monkeypatch):
    monkeypatch.setattr(extras, "missing", lambda feature: ["torch"] if feature in extras.NEEDS else [])


def test_without_torch_the_cross_encoder_is_refused_with_the_install_line(tmp_path, torch_missing, client, lead):
    dataset = tiny_dataset(tmp_path, "bare", seed=4, documents=3)
    with pytest.raises(
        JudgeRunError,
        match=r"cross-encoder is not installed \(torch missing\): "
        r"\.venv/bin/pip install -r requirements-ml\.txt",
    ):
        start_judge_run(dataset, "learned", options={"cross_encoder": True})
    with pytest.raises(CommandError, match="not installed"):
        call_command("judge_dataset", "bare", "--judge", "learned", "--cross-encoder")
    assert not JudgeRun.objects.exists()
    # Features only still run.
    assert start_judge_run(dataset, "learned").judge == "learned"
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert 'id="judge-cross-encoder" disabled>' in page and "– not installed" in page
    response = client.post(
        reverse("judge_start", args=[dataset.pk]), {"judge": "learned", "cross_encoder": "1"}, follow=True
    )
    assert "cross-encoder is not installed" in response.content.decode()
    assert JudgeRun.objects.count() == 1


def test_a_stored_cross_encoder_needs_torch_to_be_reused(tmp_path, tiny_packaged, monkeypatch):
    dataset = tiny_dataset(tmp_path, "again", seed=5, documents=4)
    run = start_judge_run(dataset, "learned", options={"cross_encoder": True, "ce_folds": 2, "ce_epochs": 1})
    from scoring.machine.runs import run_judge_run

    source = run_judge_run(run.pk)
    assert source.status == "done"
    monkeypatch.setattr(extras, "missing", lambda feature: ["torch"] if feature in extras.NEEDS else [])
    with pytest.raises(JudgeRunError, match="includes a cross-encoder.*not installed"):
        start_judge_run(dataset, "learned", options={"model_from": source.pk})


def test_the_embedding_judge_is_no_longer_offered_for_judge_runs(tmp_path, client, lead):
    dataset = tiny_dataset(tmp_path, "emb", seed=6, documents=3)
    with pytest.raises(JudgeRunError, match="no longer offered.*--cross-encoder"):
        start_judge_run(dataset, "embedding")
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert '<option value="embedding"' not in page and 'id="judge-cross-encoder"' in page
