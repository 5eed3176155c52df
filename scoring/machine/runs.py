"""Machine rounds: start a judge run, have its judge fit and predict every (summary, ACU) pair
with progress, calibrate it by document-wise cross-validation against human labels, and store it
with its figures (scoring.machine.figures).

A run is a Batch of kind `machine` with a JudgeRun (judge, model, parameters, version) and one
MachineJudgment per pair; it never writes human Judgment rows. Its judgments and figures are
written in one transaction at the end, so a failed or interrupted run leaves none behind. A judge
that pays per answer (`Judge.resumable`: the llm judge) has its answers stored as they arrive
(scoring.machine.answers): its failed or interrupted run is resumed (`resume_judge_run`) and asks
only what it has no answer for, and a new run copies the answers earlier runs got for the very same
questions unless its options ask for fresh answers. Every judge is driven the same way (scoring.machine.judges.base.Judge);
none by its name.
"""

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.llm import LLMError
from annotation.models import ACU
from hits.models import Batch, JudgeRun, MachineJudgment
from scoring.machine.answers import RunAnswers, answered
from scoring.machine.calibration import calibrate
from scoring.machine.data import Pairs, label_sources, load_pairs, reference_texts
from scoring.machine.figures import clean, figures
from scoring.machine.judges import Judge, JudgeUnavailable, Prediction, Work, get_judge, run_judge

logger = logging.getLogger(__name__)


class JudgeRunError(Exception):
    """A judge run cannot be started; the message is for the lead."""


def start_judge_run(dataset, judge_name: str, *, options: dict | None = None, label_round=None, user=None) -> JudgeRun:
    """Create a queued machine round after checking that the judge can run and there is work."""
    options = {k: v for k, v in (options or {}).items() if v not in (None, "")}
    try:
        judge = run_judge(judge_name, **options)
    except JudgeUnavailable as exc:
        raise JudgeRunError(str(exc)) from None
    if label_round is not None and (label_round.dataset_id != dataset.pk or label_round.kind == Batch.Kind.MACHINE):
        raise JudgeRunError("The label round must be a crowd or expert round of this dataset.")
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


@dataclass
class Resume:
    """A run taken up again: how many of its summaries it has an answer for already."""

    run: JudgeRun
    answered: int
    summaries: int

    def message(self) -> str:
        return f"Resuming run {self.run.pk}: {self.answered:,} of {self.summaries:,} summaries already answered"


def unfinished_twin(dataset, judge_name: str, *, options: dict | None = None, label_round=None) -> JudgeRun | None:
    """The latest unfinished run (failed, queued or running) of a resumable judge that a new run
    with these settings would repeat: same dataset, judge, model, parameters (endpoint,
    temperature, prompt version), judge version, options and label round. None for other judges."""
    options = {k: v for k, v in (options or {}).items() if v not in (None, "")}
    try:
        judge = get_judge(judge_name, **options)
    except JudgeUnavailable:
        return None
    if not judge.resumable:
        return None
    runs = JudgeRun.objects.filter(
        batch__dataset=dataset,
        judge=judge_name,
        model=judge.model,
        judge_version=judge.version,
        label_round=label_round,
    ).exclude(status=JudgeRun.Status.DONE)
    return next((r for r in runs.order_by("-pk") if r.params == judge.params and r.options == options), None)


def resume_judge_run(run: JudgeRun) -> Resume:
    """Queue an unfinished run of a resumable judge again, to continue from its stored answers;
    JudgeRunError when it is finished, its judge keeps no answers, or the judge would now ask
    another model or endpoint (start a new run for that: its answers would not be reused)."""
    if run.status == JudgeRun.Status.DONE:
        raise JudgeRunError(f"Judge run {run.pk} is finished; there is nothing to resume.")
    try:
        judge = run_judge(run.judge, **run.options)
    except JudgeUnavailable as exc:
        raise JudgeRunError(str(exc)) from None
    if not judge.resumable:
        raise JudgeRunError(f"The {run.judge} judge keeps no answers to resume from: start a new run.")
    if (judge.model, judge.params, judge.version) != (run.model, run.params, run.judge_version):
        raise JudgeRunError(
            f"Judge run {run.pk} asked {run.model} ({run.params}); the judge would now ask {judge.model} "
            f"({judge.params}): start a new run (none of its answers would be reused)."
        )
    answered_now, summaries = answered(run, judge, load_pairs(run.batch.dataset))
    usage = {**run.llm_usage, "resumed": run.llm_usage.get("resumed", 0) + 1, "beat": timezone.now().isoformat()}
    JudgeRun.objects.filter(pk=run.pk).update(
        status=JudgeRun.Status.QUEUED, error="", finished_at=None, in_background=False, llm_usage=usage
    )
    run.refresh_from_db()
    logger.info("Judge run %s resumed: %d of %d summaries answered", run.pk, answered_now, summaries)
    return Resume(run, answered_now, summaries)


def _work(run: JudgeRun, judge: Judge, pairs: Pairs, started: float) -> Work:
    dataset = run.batch.dataset

    def progress(share: float, pairs_done: int | None = None) -> None:
        done = {} if pairs_done is None else {"pairs_done": pairs_done}
        JudgeRun.objects.filter(pk=run.pk).update(progress=share, **done)

    return Work(
        pairs=pairs,
        labels=label_sources(dataset, run.label_round),
        texts=list(pairs.summary_texts.values()) + reference_texts(dataset),
        progress=progress,
        run_id=run.pk,
        dataset_id=dataset.pk,
        dataset_name=dataset.name,
        label_round=run.label_round_id,
        started=started,
        answers=RunAnswers(run.pk) if judge.resumable else None,
    )


def _judgments(run_id: int, judge: Judge, pairs: Pairs, prediction: Prediction, probability) -> list[MachineJudgment]:
    raw = prediction.scores[judge.score_names[0]]
    several = len(judge.score_names) > 1
    return [
        MachineJudgment(
            run_id=run_id,
            summary_id=int(s),
            acu_id=int(a),
            raw=float(raw[i]),
            probability=float(probability[i]),
            scores={name: float(prediction.scores[name][i]) for name in judge.score_names} if several else None,
        )
        for i, (s, a) in enumerate(zip(pairs.summary.tolist(), pairs.acu.tolist(), strict=False))
    ]


def _judge_and_store(run: JudgeRun, started: float) -> None:
    """Fit, predict, calibrate (unless the judge calibrates itself), compute the figures and
    store it all in one transaction; JudgeUnavailable says why a judge cannot."""
    dataset = run.batch.dataset
    judge = get_judge(run.judge, **run.options)
    judge.require()
    pairs = load_pairs(dataset)
    if not len(pairs):
        raise JudgeUnavailable(f"{dataset.name} has no (summary, ACU) pairs to judge.")
    work = _work(run, judge, pairs, started)
    JudgeRun.objects.filter(pk=run.pk).update(pairs_total=len(pairs), pairs_done=0, progress=0.0)
    judge.fit(work)
    prediction = judge.predict(work)
    probability, record = prediction.probability, prediction.calibration
    if probability is None or record is None:
        raw = prediction.scores[judge.score_names[0]]
        probability, record = calibrate(raw, judge.calibration_scale, pairs, work.labels)
    names = dict(dataset.systems.values_list("pk", "name"))
    figs = {
        **figures(
            pairs,
            prediction.scores,
            probability,
            work.labels,
            names,
            record["target"],
            trained_documents=record.get("trained_documents"),
        ),
        **prediction.figures,
    }
    fitted = judge.model_to_store(figs)
    rows = _judgments(run.pk, judge, pairs, prediction, probability)
    with transaction.atomic():
        MachineJudgment.objects.filter(run_id=run.pk).delete()
        MachineJudgment.objects.bulk_create(rows, batch_size=5000)
        JudgeRun.objects.filter(pk=run.pk).update(
            status=JudgeRun.Status.DONE,
            progress=1.0,
            pairs_done=len(pairs),
            model=judge.model,
            params=clean(judge.params),
            calibration=clean(record),
            figures=clean(figs),
            fitted=clean(fitted),
            finished_at=timezone.now(),
            seconds=time.perf_counter() - started,
        )
    logger.info("Judge run %s done: %d pairs in %.1f s", run.pk, len(pairs), time.perf_counter() - started)


def run_judge_run(run_id: int) -> JudgeRun:
    """Judge, calibrate and store; idempotent (a finished run is left as it is)."""
    run = JudgeRun.objects.select_related("batch__dataset", "label_round").get(pk=run_id)
    if run.status == JudgeRun.Status.DONE:
        return run
    started = time.perf_counter()
    JudgeRun.objects.filter(pk=run_id).update(status=JudgeRun.Status.RUNNING, error="", progress=0.0)
    try:
        _judge_and_store(run, started)
    except (JudgeUnavailable, LLMError) as exc:
        _fail(run_id, str(exc), started)
    except Exception as exc:
        logger.exception("Judge run %s failed", run_id)
        _fail(run_id, f"The judge failed: {type(exc).__name__}: {exc}", started)
    except KeyboardInterrupt:  # Ctrl-C of judge_dataset: the answers received so far are stored
        _fail(run_id, "Interrupted (Ctrl-C).", started)
        raise
    return JudgeRun.objects.get(pk=run_id)


def _fail(run_id: int, message: str, started: float) -> None:
    """Mark the run failed, unless it got to store itself (a Ctrl-C right after its last
    transaction): a finished run, with its files, is never failed afterwards. A second Ctrl-C
    while this is recorded (people press it twice) left the run marked running as if it still
    ran: the record is made once more, then that Ctrl-C goes on."""
    try:
        _mark_failed(run_id, message, started)
    except KeyboardInterrupt:
        _mark_failed(run_id, message, started)
        raise


def _mark_failed(run_id: int, message: str, started: float) -> None:
    marked = (
        JudgeRun.objects.filter(pk=run_id)
        .exclude(status=JudgeRun.Status.DONE)
        .update(
            status=JudgeRun.Status.FAILED,
            error=message,
            finished_at=timezone.now(),
            seconds=time.perf_counter() - started,
        )
    )
    if not marked:
        return
    logger.warning("Judge run %s failed: %s", run_id, message)
    # A failed run stores nothing: not the files (a cross-encoder) its judge may have written either.
    shutil.rmtree(Path(settings.JUDGE_MODELS_DIR) / f"run-{run_id}", ignore_errors=True)
