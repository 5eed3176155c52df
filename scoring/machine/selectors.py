"""Reading judge runs: the newest finished run of each judge, how many are busy, and the run
triage uses by default."""

from hits.models import JudgeRun
from hits.triage import ranking_verdict
from scoring.machine.judges import judge_class


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
    """The judge run triage uses by default: the newest finished run of a judge that trains (the
    learned judge) fit for ranking, else the newest calibrated run fit for ranking, else the
    newest finished run (whose page then says why it is refused)."""
    runs = list(
        JudgeRun.objects.filter(batch__dataset=dataset, status=JudgeRun.Status.DONE).order_by("-created_at", "-pk")
    )
    usable = [r for r in runs if r.calibration.get("target") and ranking_verdict(r.figures)["for_ranking"]]
    trained = next((r for r in usable if judge_class(r.judge).trains), None)
    return trained or (usable[0] if usable else (runs[0] if runs else None))
