"""What is reported of a judge run: its JSON (`judge_dataset --json`, the API), its summary in
`compute_scores --json`, and its triage grid against human labels (`triage_report`)."""

import numpy as np

from hits.models import JudgeRun, MachineJudgment
from hits.triage import ranking_verdict
from scoring.machine.answers import usage_json
from scoring.machine.data import label_sources
from scoring.machine.figures import clean, crossfit_or_none, suggestion_or_none
from scoring.machine.judges import judge_class
from scoring.stats import machine_figures


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
        "triage_crossfit": run.figures.get("triage_crossfit"),
        "triage_suggestion": run.figures.get("triage_suggestion"),
        "ranking": ranking_verdict(run.figures),
        "trained_on": run.figures.get("trained_on"),
        "fitted": run.fitted or None,
        "seconds": run.seconds,
        "llm": usage_json(run),
    }


def triage_report(run: JudgeRun, *, label_round=None, grid=None, **criteria) -> dict:
    """The triage grid of a finished run against human labels (the run's calibration labels, or
    those of `label_round`), from its stored probabilities, and the cross-fitted threshold with its
    held-out figures (`crossfit`: scoring.stats.triage_crossfit; `criteria`: folds, min_agreement,
    max_change), leaving out the documents the judge trained on when it trained on a share, and the
    confidence suggested for new documents (`suggestion`: scoring.stats.triage_crossfit.suggest, on
    the documents the judge trained on when it trained on a share)."""
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
    return clean(
        {
            "judge_run": run.pk,
            "judge": run.judge,
            "labels": name,
            "pairs": len(rows),
            "ranking": ranking_verdict(run.figures),
            "rows": table,
            "saved_at_tau_0_95": machine_figures.saved_at(table, 0.95),
            "crossfit": crossfit_or_none(
                probability.astype(float),
                human,
                summary,
                document,
                system,
                run.calibration.get("trained_documents"),
                grid=grid or machine_figures.TRIAGE_GRID,
                **criteria,
            ),
            "suggestion": suggestion_or_none(
                probability.astype(float), human, summary, document, system, run.calibration.get("trained_documents")
            ),
        }
    )


def run_identity(run: JudgeRun) -> dict:
    """What names a judge run in every report of it: its id, round, judge, model and version."""
    return {"id": run.pk, "round": run.batch_id, "judge": run.judge, "model": run.model, "version": run.version}


def machine_summary(run: JudgeRun) -> dict:
    """A run's per-system machine scores for `compute_scores --json`: its raw score as `raw`, or
    a judge of several raw scores each by its name (nli: Lite2Pyramid's p2c, l2c, p3c, l3c), means
    over documents of the per-summary means."""
    score_names = judge_class(run.judge).score_names
    systems = {}
    for name, row in (run.figures.get("systems") or {}).items():
        entry = {"machine": row.get("machine"), "machine_label": row.get("machine_label"), "human": row.get("human")}
        if len(score_names) > 1:
            entry.update({k: row["raw"].get(k) for k in score_names})
        else:
            entry["raw"] = row["raw"].get(score_names[0])
        systems[name] = entry
    return {
        **run_identity(run),
        "params": run.params,
        "calibrated_on": run.calibration.get("target"),
        "classification": run.figures.get("classification"),
        "systems": systems,
    }
