"""The human-unit budget's Celery task, beside its service (scoring.drafts.unit_budget) so that
the page starting it imports no module above the drafts. Registered under its former name,
scoring.tasks.apply_budget (scoring.tasks imports it for the worker's autodiscovery)."""

from celery import shared_task

from scoring.drafts.unit_budget.service import run_job


@shared_task(name="scoring.tasks.apply_budget", acks_late=True)
def apply_budget(job_id: int) -> str:
    """Apply a lead's human-unit budget (a DraftJob of kind budget); rerunning re-applies it."""
    return run_job(job_id).status
