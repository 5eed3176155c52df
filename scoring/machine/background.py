"""Judge runs started from a page or the API (not `judge_dataset`, which runs them in its own
process): queued on a Celery worker with a broker; in the embedded mode on a background thread
of the server (config/dispatch.dispatch_long), so the page shows the run's progress instead of
holding the request for a training of many minutes, or in the request with
LONG_TASKS_IN_BACKGROUND off. Over the service (scoring.machine.runs) and its task (scoring.machine.tasks), which never
import this module."""

from django.conf import settings

from config.dispatch import dispatch_long, in_background, lost_in_background
from hits.models import JudgeRun
from scoring.machine import tasks
from scoring.machine.answers import silent_for
from scoring.machine.reports import run_json
from scoring.machine.runs import JudgeRunError, resume_judge_run, start_judge_run, unfinished_twin


def start_run(run: JudgeRun) -> bool:
    """Run or queue a judge run; True when it ran here already."""
    if in_background():
        JudgeRun.objects.filter(pk=run.pk).update(in_background=True)
    ran, _ = dispatch_long(tasks.run_judge, run.pk)
    return ran


def lost(run: JudgeRun) -> bool:
    """A run left to a background thread of the embedded server that stopped mid-run: it will
    never end by itself, and is shown as stopped, to start again."""
    unfinished = run.status in (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)
    return run.in_background and unfinished and lost_in_background(tasks.run_judge, run.pk)


def resumable(run: JudgeRun) -> bool:
    """An unfinished run nothing runs any more: failed (an endpoint outage, Ctrl-C), lost, or
    marked running but silent (no chunk of answers stored) for longer than a judge task may run
    (JUDGE_TASK_TIME_LIMIT: a worker or a command that died with it)."""
    if run.status == JudgeRun.Status.FAILED or lost(run):
        return True
    silent = silent_for(run) if run.status == JudgeRun.Status.RUNNING else None
    return silent is not None and silent > settings.JUDGE_TASK_TIME_LIMIT


def start_or_resume(dataset, judge_name: str, *, options: dict, label_round=None, user=None):
    """(run, runs.Resume or None): the page's and the API's start. A run of a judge that keeps its
    answers (the llm judge) repeating an unfinished one with the same settings resumes that one
    instead of paying for every answer again; while that one still runs, JudgeRunError."""
    twin = unfinished_twin(dataset, judge_name, options=options, label_round=label_round)
    if twin is not None and not resumable(twin):
        raise JudgeRunError(
            f"Judge run {twin.pk} ({twin.judge}, {twin.model}) with the same settings is still {twin.status}: "
            "its answers are stored as they arrive; follow its progress rather than paying for them twice."
        )
    if twin is not None:
        return twin, resume_judge_run(twin)
    return start_judge_run(dataset, judge_name, options=options, label_round=label_round, user=user), None


def run_state(run: JudgeRun) -> dict:
    """`run_json` with a lost run's status read as "stopped" (the API)."""
    return {**run_json(run), "status": "stopped"} if lost(run) else run_json(run)
