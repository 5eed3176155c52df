"""Scoring tasks, thin over the services. All are idempotent (a rerun stores another run
with the same result), so they are safe under acks_late; their time limits stay below the
broker's visibility timeout (settings.CELERY_TASK_TIME_LIMIT). A dropped database connection
(OperationalError) is retried with backoff instead of failing the task."""

import logging

from celery import shared_task

from annotation.models import Dataset
from config.db_retry import DB_RETRY  # a dropped database connection: retried with backoff
from config.dispatch import dispatch
from hits.models import Batch
from scoring.drafts.tasks import apply_budget  # noqa: F401  (defined beside its service; registered here)
from scoring.machine.tasks import run_judge  # noqa: F401  (defined beside its service; registered here)
from scoring.runs import metric_uploads, recompute, services, statistics, worker_estimates

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, **DB_RETRY)
def recompute_scores(dataset_id: int, batch_id: int | None = None) -> int | None:
    """Recompute a dataset's scores (or one round's), asked for by the writes that changed their
    judgments or by a lead; none when the scope's latest run is current (asks of one commit
    coalesce so in the embedded mode). The queued flag is cleared before reading, so a
    submission stored meanwhile queues one more run."""
    recompute.claimed(dataset_id, batch_id)
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        return None
    batch = Batch.objects.filter(pk=batch_id, dataset=dataset).first() if batch_id else None
    if batch_id and batch is None:
        return None
    return services.current_scores(dataset, batch, trigger="judgments", parts=()).pk


@shared_task(acks_late=True, **DB_RETRY)
def repair_stale_recomputes() -> int:
    """Beat: re-queue recomputes whose task message was lost."""
    return recompute.repair_stuck()


@shared_task(acks_late=True, **DB_RETRY)
def run_power_analysis(run_id: int) -> int:
    """Plan the parts and dispatch one `power_part` per part (`config.dispatch`: queued with a
    broker, so every worker process takes some; one after the other in the embedded mode); the
    last part finishes the run. A run on shared documents runs whole while planned."""
    for part in statistics.plan_power(run_id):
        dispatch(power_part, run_id, part)
    return run_id


@shared_task(acks_late=True, **DB_RETRY)
def power_part(run_id: int, part: list[int]) -> bool:
    return statistics.run_power_part(run_id, part)


@shared_task(acks_late=True, **DB_RETRY)
def run_metric_significance(run_id: int) -> int:
    statistics.run_metric_correlations(run_id)
    return run_id


@shared_task(acks_late=True, **DB_RETRY)
def refit_allocation(batch_id: int) -> int:
    """Refit the worker estimates of an adaptive batch (scoring/runs/worker_estimates.py). The
    queued flag is cleared before reading, so a submission stored meanwhile queues one more refit."""
    dataset_id = Batch.objects.filter(pk=batch_id).values_list("dataset_id", flat=True).first()
    if dataset_id is not None:
        recompute.claimed(dataset_id, batch_id, recompute.REFIT)
    return worker_estimates.refit_estimates(batch_id)


def refit_on_submission(sender, batch_id: int, dataset_id: int | None = None, adaptive: bool = False, **kwargs):
    """After a submission to an adaptive batch (its transaction committed): a refit, coalesced
    (`recompute.request_refit`: at most one queued per batch, REFIT_INTERVAL seconds later with a
    broker). Never fails the submission."""
    if not adaptive:  # the sender read the batch's policy: no query for a fixed batch
        return
    if dataset_id is None:
        dataset_id = Batch.objects.filter(pk=batch_id).values_list("dataset_id", flat=True).first()
    if dataset_id is not None:
        recompute.request_refit(dataset_id, batch_id, worker_estimates.REFIT_INTERVAL)


@shared_task(acks_late=True, **DB_RETRY)
def compute_rouge_scores(dataset_id: int) -> str:
    """ROUGE-1/2/L recall and F1 of every summary of a dataset, stored as metric scores."""
    from annotation.importing import DatasetImportError
    from scoring.runs.metrics import compute_rouge

    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        return "The dataset is gone."
    try:
        result = compute_rouge(dataset)
    except DatasetImportError as exc:
        return f"Nothing was computed: {exc}."
    return f"ROUGE computed for {result['summaries']} summaries ({', '.join(result['metrics'])})."


@shared_task(acks_late=True, **DB_RETRY)
def import_metric_upload(upload_id: int) -> str:
    """A metric file uploaded on the Metrics page, read with its progress (scoring.runs.metric_uploads)."""
    return metric_uploads.run(upload_id)
