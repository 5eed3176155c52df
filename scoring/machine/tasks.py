"""The judge run's Celery task, beside its service (scoring.machine.runs) so that the pages
starting a run (scoring.machine.background) import no module above the machine judges.
Registered under its former name, scoring.tasks.run_judge (scoring.tasks imports it for the
worker's autodiscovery), so a message queued before an upgrade still finds it."""

from celery import shared_task
from django.conf import settings

from scoring.machine import runs


@shared_task(
    name="scoring.tasks.run_judge",
    acks_late=True,
    time_limit=settings.JUDGE_TASK_TIME_LIMIT,
    soft_time_limit=settings.JUDGE_TASK_TIME_LIMIT - 60,
)
def run_judge(run_id: int) -> str:
    """Judge a queued machine round (a finished run is left as it is)."""
    return runs.run_judge_run(run_id).status
