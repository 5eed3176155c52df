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


def transferred(run: JudgeRun, own_runs: set[int]) -> bool:
    """Whether a run judged with a model trained on another dataset (`model_from` a run not of this
    dataset's)."""
    source = (run.params or {}).get("model_from")
    return source not in (None, "") and int(source) not in own_runs


def triage_source(dataset) -> JudgeRun | None:
    """The judge run triage uses by default: the dataset's own newest run fit for ranking (never a
    model transferred from another dataset while an own one is fit), a judge that trains on the
    dataset's labels (the learned judge) first, else the newest calibrated run fit for ranking;
    a transferred run fit for ranking only when no own run is; else the newest finished run
    (whose page then says why it is refused)."""
    runs = list(
        JudgeRun.objects.filter(batch__dataset=dataset, status=JudgeRun.Status.DONE).order_by("-created_at", "-pk")
    )
    own_ids = {r.pk for r in runs}
    usable = [r for r in runs if r.calibration.get("target") and ranking_verdict(r.figures)["for_ranking"]]
    own = [r for r in usable if not transferred(r, own_ids)]
    trained = next((r for r in own if judge_class(r.judge).trains), None)
    return trained or next(iter(own), None) or next(iter(usable), None) or (runs[0] if runs else None)
