"""Scoring tasks, thin over the services. All are idempotent (a rerun stores another run
with the same result), so they are safe under acks_late; their time limits stay below the
broker's visibility timeout (settings.CELERY_TASK_TIME_LIMIT)."""
from celery import shared_task

from annotation.models import Dataset

from . import recompute, services, statistics


@shared_task(acks_late=True)
def recompute_scores(dataset_id: int) -> int | None:
    recompute.claim(dataset_id)
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        return None
    return services.compute_scores(dataset, trigger="submissions").pk


@shared_task(acks_late=True)
def run_power_analysis(run_id: int) -> int:
    statistics.run_power(run_id)
    return run_id


@shared_task(acks_late=True)
def run_metric_significance(run_id: int) -> int:
    statistics.run_metric_correlations(run_id)
    return run_id


@shared_task(acks_late=True)
def apply_budget(job_id: int) -> str:
    """Apply a lead's human-unit budget (a DraftJob of kind budget); rerunning re-applies it."""
    from .budget_service import run_job

    return run_job(job_id).status
