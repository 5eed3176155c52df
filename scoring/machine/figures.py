"""A judge run's figures against the human labels: classification per label source with
intervals, system- and summary-level correlations, the triage grid and per-system scores."""

import math

import numpy as np

from hits.triage import ranking_verdict
from scoring.machine.data import Pairs
from scoring.stats import calibration, machine_figures, triage_crossfit

CORRELATION_RESAMPLES = 1000


def clean(value):
    """A value as JSON can hold it: NaN and infinities as None, numpy numbers as Python's."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, (np.floating, np.integer)):
        return clean(value.item())
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def crossfit_or_none(probability, human, summary, document, system, trained_documents=None, **options) -> dict | None:
    """Triage's cross-fitted figures (scoring.stats.triage_crossfit) on the labelled pairs of the
    documents the judge did not train on; None with fewer than two such documents."""
    keep = ~np.isin(document, list(trained_documents or []))
    try:
        out = triage_crossfit.crossfit(
            probability[keep], human[keep], summary[keep], document[keep], system[keep], **options
        )
    except ValueError:
        return None
    out["left_out_documents"] = len(trained_documents or [])
    return out


def suggestion_or_none(probability, human, summary, document, system, trained_documents=None) -> dict | None:
    """The confidence the run suggests for triage (scoring.stats.triage_crossfit.suggest), chosen on
    the labelled pairs whose probabilities are out of fold: the documents a learned judge trained on
    (its gold round), else every labelled document (their calibration is out of fold by document);
    over triage_crossfit.SUGGEST_GRID, the cs a pairs batch takes. None without labelled pairs there."""
    keep = np.isin(document, list(trained_documents)) if trained_documents else np.ones(len(human), dtype=bool)
    if not keep.any():
        return None
    out = triage_crossfit.suggest(probability[keep], human[keep], summary[keep], document[keep], system[keep])
    out["chosen_on"] = "the documents the judge trained on" if trained_documents else "the labelled documents"
    return out


def figures(
    pairs: Pairs,
    raw_scores: dict,
    probability: np.ndarray,
    sources: dict,
    system_names: dict,
    target: str | None,
    trained_documents=None,
) -> dict:
    out: dict = {
        "pairs": len(pairs),
        "summaries": len(np.unique(pairs.summary)),
        "target": target,
        "classification": {},
        "correlations": None,
        "systems": {},
        "triage": [],
        "triage_crossfit": None,
        "triage_suggestion": None,
    }
    keys = pairs.keys()
    for name, labels in sources.items():
        has = np.array([k in labels for k in keys], dtype=bool)
        if has.any():
            y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
            out["classification"][name] = {
                **calibration.classification(y, probability[has]),
                "ci": machine_figures.classification_intervals(
                    y, probability[has], pairs.document[has], CORRELATION_RESAMPLES
                ),
            }
    machine = machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, probability)
    labelled_machine = machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, probability >= 0.5)
    raw_tables = {
        name: machine_figures.summary_table(pairs.summary, pairs.document, pairs.system, values)
        for name, values in raw_scores.items()
    }
    human_table = None
    if target is not None:
        labels = sources[target]
        has = np.array([k in labels for k in keys], dtype=bool)
        judged = np.isin(pairs.summary, np.unique(pairs.summary[has]))
        # A judged summary's human score counts its ACUs without a label as not present (scoring.md).
        human_values = np.array([labels.get(k, False) for k in keys], dtype=float)
        human_table = machine_figures.summary_table(
            pairs.summary[judged], pairs.document[judged], pairs.system[judged], human_values[judged]
        )
        machine_judged = machine_figures.summary_table(
            pairs.summary[judged], pairs.document[judged], pairs.system[judged], probability[judged]
        )
        _, systems, human_matrix = machine_figures.matrix(human_table)
        _, _, machine_matrix = machine_figures.matrix(machine_judged, systems)
        out["correlations"] = machine_figures.correlations(human_matrix, machine_matrix, CORRELATION_RESAMPLES)
        y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
        out["triage"] = machine_figures.triage(
            probability[has], y, pairs.summary[has], pairs.document[has], pairs.system[has]
        )
        out["triage_crossfit"] = crossfit_or_none(
            probability[has], y, pairs.summary[has], pairs.document[has], pairs.system[has], trained_documents
        )
        out["triage_suggestion"] = suggestion_or_none(
            probability[has], y, pairs.summary[has], pairs.document[has], pairs.system[has], trained_documents
        )
    out["ranking"] = ranking_verdict(out)
    out["triage_saved"] = machine_figures.saved_at(out["triage"]) if out["triage"] else None
    human_systems = machine_figures.system_means(human_table) if human_table is not None else {}
    machine_systems = machine_figures.system_means(machine)
    label_systems = machine_figures.system_means(labelled_machine)
    raw_systems = {name: machine_figures.system_means(t) for name, t in raw_tables.items()}
    for sid, (score, n) in sorted(machine_systems.items(), key=lambda kv: system_names.get(kv[0], "")):
        row = {
            "machine": score,
            "machine_label": label_systems[sid][0],
            "summaries": n,
            "raw": {name: raw_systems[name][sid][0] for name in raw_systems},
        }
        if sid in human_systems:
            row["human"] = human_systems[sid][0]
        out["systems"][system_names.get(sid, str(sid))] = row
    return out
