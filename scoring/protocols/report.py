"""The protocol comparison of one rating round (RoSE §5) as one JSON-able dict: what the
Protocols page, the API and ``protocol_report --json`` show. Every figure comes from
``scoring.stats.protocols`` on the arrays ``selectors.protocol_data`` reads."""

from dataclasses import dataclass

import numpy as np

from scoring.stats import protocols as stats

from .selectors import LABELS, PROTOCOLS, ProtocolData

LEVELS = ("summary", "system")


@dataclass(frozen=True)
class Settings:
    method: str = "pearson"
    n_resamples: int = 1000
    power_sizes: tuple[int, ...] = (10, 50, 100, 200)
    power_trials: int = 100
    power_resamples: int = 1000
    min_examples: int = 10
    seed: int = 0


def _measures(data: ProtocolData) -> dict:
    measures = {p: data.means[p] for p in PROTOCOLS if not np.isnan(data.means[p]).all()}
    if data.acu is not None:
        measures["acu"] = data.acu
    return measures


def build_report(data: ProtocolData, settings: Settings = Settings(), with_power: bool = True) -> dict:
    """The whole comparison; power (the costly part: seconds at RoSE's size) only ``with_power``."""
    rng = np.random.default_rng(settings.seed)
    measures = _measures(data)
    rated = [p for p in PROTOCOLS if p in measures]
    args = (settings.method, settings.n_resamples)
    report: dict = {
        "round": {"id": data.round.pk, "name": data.round.name},
        "documents": len(data.documents),
        "systems": data.systems,
        "labels": {k: LABELS[k] for k in [*measures, "length"]},
        "acu_source": data.acu_source,
        "settings": {
            "method": settings.method,
            "n_resamples": settings.n_resamples,
            "power_sizes": list(settings.power_sizes),
            "power_trials": settings.power_trials,
            "power_resamples": settings.power_resamples,
            "min_examples": settings.min_examples,
            "seed": settings.seed,
        },
    }
    # Per protocol: α over each rater's own ratings ("ratings": how many there are; none in a round
    # of means without rater ids) and the summaries with a mean score, which the correlations read.
    report["alpha"] = {
        p: stats.alphas(
            [f"{i}:{j}" for i, j in zip(data.ratings[p].documents, data.ratings[p].systems, strict=True)],
            data.ratings[p].scores,
        )
        | {"summaries": int(np.isfinite(data.means[p]).sum())}
        for p in rated
    }
    report["correlations"] = {level: stats.correlation_matrix(measures, level, *args, rng=rng) for level in LEVELS}
    report["length"] = {level: stats.with_measure(measures, data.length, level, *args, rng=rng) for level in LEVELS}
    report["rankings"] = {
        name: stats.ranking(m, data.systems, settings.n_resamples, rng=rng) for name, m in measures.items()
    }
    report["metrics"] = {
        metric: {level: stats.with_measure(measures, values, level, *args, rng=rng) for level in LEVELS}
        for metric, values in sorted(data.metrics.items())
    }
    report["mix"] = (
        {p: stats.mix(measures[p], data.length, data.acu, settings.n_resamples, rng=rng) for p in rated}
        if data.acu is not None
        else {}
    )
    if len(data.ratings["prior"].scores) and len(data.ratings["ref_free"].scores):
        shape = (len(data.documents), len(data.systems))
        report["case_study"] = stats.case_study(
            data.ratings["prior"], data.ratings["ref_free"], shape, settings.min_examples, settings.method
        )
    else:
        report["case_study"] = None
    # Last, on a generator of its own: the other figures are the same with or without it.
    power_rng = np.random.default_rng([settings.seed, 1])
    report["power"] = (
        {
            name: stats.power(m, settings.power_sizes, settings.power_trials, settings.power_resamples, rng=power_rng)
            for name, m in measures.items()
        }
        if with_power
        else None
    )
    return clean(report)


def correlation_value(report: dict, level: str, a: str, b: str) -> float | None:
    """The correlation of measures a and b at a level from a report (either order)."""
    for entry in report["correlations"][level]:
        if {entry["a"], entry["b"]} == {a, b}:
            return entry["value"]
    return None


def clean(value):
    """The report with NaN and infinities as None, so it is valid JSON."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
