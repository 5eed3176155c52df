"""What the systems and workers pages show of the machine rounds (read only)."""

from hits.models import JudgeRun
from hits.triage import ranking_verdict
from scoring.machine.calibration import SOURCE_ORDER
from scoring.machine.selectors import latest_and_running, triage_source

ORANGE, BLUE, GREEN = "#d9822b", "#2457c5", "#2e8b57"


def triage_chart(run: JudgeRun) -> dict | None:
    """The triage grid of a run: share of crowd judgments saved and agreement with the full
    human labels against the confidence c."""
    rows = run.figures.get("triage") or []
    if not rows:
        return None

    def series(key):
        return [{"x": r["c"], "y": r[key]} for r in rows if r.get(key) is not None]

    lines = [
        ("crowd judgments saved", "saved_share", ORANGE),
        ("agreement with the human labels", "agreement", BLUE),
        ("system-level Kendall τ with the human ranking", "system_kendall", GREEN),
    ]
    # A line with no value (τ is not measured with too few systems) gets no legend entry without a line.
    datasets = [
        {"label": label, "data": series(key), "borderColor": colour, "backgroundColor": colour, "showLine": True}
        for label, key, colour in lines
        if series(key)
    ]
    return {
        "type": "scatter",
        "data": {"datasets": datasets},
        "options": {
            "scales": {
                # Every tick with the same digits ("0.0" to "1.0", not "0" beside "1.0"): static/js/charts.js.
                "x": {"min": 0.5, "max": 1, "decimals": 2, "title": {"display": True, "text": "confidence c"}},
                "y": {"min": 0, "max": 1, "decimals": 1, "title": {"display": True, "text": "share"}},
            },
            "plugins": {"title": {"display": True, "text": f"Triage with {run.judge} v{run.version} (run {run.pk})"}},
        },
    }


def classification_rows(figures: dict) -> list[tuple[str, dict]]:
    """A run's classification figures per label source, its calibration target first (the first
    of SOURCE_ORDER present): the page puts the run's correlations, measured against the target, on
    its first row. Looked up by name: PostgreSQL's jsonb returns the stored keys reordered (crowd
    before expert)."""
    by_source = figures.get("classification") or {}
    order = [*SOURCE_ORDER, *sorted(set(by_source) - set(SOURCE_ORDER))]
    return [(source, by_source[source]) for source in order if source in by_source]


def systems_context(dataset, human_systems: dict) -> dict:
    """Machine columns for the leaderboard (per latest run of each judge) and the triage grid."""
    runs, running = latest_and_running(dataset)
    for r in runs:
        r.ranking = ranking_verdict(r.figures)  # type: ignore[attr-defined]
        r.classification_rows = classification_rows(r.figures)  # type: ignore[attr-defined]
    columns = [
        {
            "run": r,
            "label": f"{r.judge} v{r.version}",
            "systems": r.figures.get("systems") or {},
            "ranking": r.ranking,  # type: ignore[attr-defined]
        }
        for r in runs
    ]
    rows = {name: [(c["systems"].get(name) or {}).get("machine") for c in columns] for name in human_systems}
    source = triage_source(dataset) if runs else None
    return {
        "machine_columns": columns,
        "machine_scores": rows,
        "machine_runs": runs,
        "triage_run": source,
        "triage_ranking": ranking_verdict(source.figures) if source else None,
        "triage_chart": triage_chart(source) if source else None,
        "running_judges": running,
    }
