"""What bench/allocation_bench.py and bench/app_pairs_bench.py print: the means over seeds, each policy
against fixed-3 paired by seed, and the table."""

from __future__ import annotations

import numpy as np
from simulated_crowd import KINDS


def means(results: dict) -> dict:
    """The issue's JSON: per policy the means over seeds (and the sd of agreement and tau)."""
    out = {}
    for name, rows in results.items():
        out[name] = {
            "judgments": float(np.mean([r["judgments"] for r in rows])),
            "agreement": float(np.mean([r["agreement"] for r in rows])),
            "agreement_sd": float(np.std([r["agreement"] for r in rows])),
            "tau": float(np.mean([r["tau"] for r in rows])),
            "tau_sd": float(np.std([r["tau"] for r in rows])),
            "stopped": {k: float(np.mean([r["stopped"][k] for r in rows])) for k in KINDS},
            "stopped_max": {k: int(max(r["stopped"][k] for r in rows)) for k in KINDS},
            "flagged": {k: float(np.mean([r["flagged"][k] for r in rows])) for k in KINDS},
            "seeds": len(rows),
            # the seeds whose gold guard fired (hits/allocation/guard.py): the rest of the run at fixed places
            "gold_guard_fired": sum(r.get("gold_guard") is not None for r in rows),
        }
        thresholds = [r["pair_threshold"] for r in rows if r.get("pair_threshold") is not None]
        if thresholds:  # pairs+judge: the settling threshold of each seed's last wave
            out[name]["pair_threshold"] = [round(t, 4) for t in thresholds]
        triage = triage_means(rows)
        if triage:
            out[name]["triage"] = triage
    return out


def triage_means(rows: list[dict]) -> dict | None:
    """The triage of a policy's seeds: the chosen c per seed, the mean share decided and (the
    simulation's) the mean tau with the triaged pairs at their truth; None without triage."""
    triaged = [r["triage"] for r in rows if r.get("triage")]
    if not triaged:
        return None
    out = {"c": [t["c"] for t in triaged], "decided": float(np.mean([t["decided"] for t in triaged]))}
    if any("on" in t for t in triaged):  # --pair-triage-when spammers: each seed's decision and its signal
        out["on"] = [t.get("on") for t in triaged]
        out["stopped_share"] = [t.get("stopped_share") for t in triaged]
    # None: the policy's judge decided nothing (pairs+judge with --pair-triage 0: the judge only a prior)
    at_truth = [r["tau_triaged_at_truth"] for r in rows if r.get("tau_triaged_at_truth") is not None]
    if at_truth:
        out["tau_triaged_at_truth"] = float(np.mean(at_truth))
    return out


def paired(results: dict, base: str = "fixed-3") -> dict:
    """Each policy against `base`, paired by seed: the share of judgments saved and the differences
    of agreement and tau, as means with 95% t-intervals over the seeds, and the seeds below base's
    agreement."""
    from scipy.stats import t as student

    def interval(values) -> list[float]:
        values = np.asarray(values, dtype=float)
        mean = float(values.mean())
        if values.size < 2:
            return [mean, mean, mean]
        half = float(student.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
        return [mean, mean - half, mean + half]

    out = {}
    for name, rows in results.items():
        if name == base or base not in results:
            continue
        pairs = list(zip(results[base], rows, strict=True))
        out[name] = {
            "saved": interval([1 - r["judgments"] / b["judgments"] for b, r in pairs]),
            "agreement_minus_base": interval([r["agreement"] - b["agreement"] for b, r in pairs]),
            "tau_minus_base": interval([r["tau"] - b["tau"] for b, r in pairs]),
            "seeds_below_base_agreement": sum(r["agreement"] < b["agreement"] for b, r in pairs),
        }
    return out


def table(summary: dict) -> str:
    lines = [
        "| policy | ACU judgments | agreement | τ | stopped (honest/biased/spammer/colluder) | flagged (same) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, m in summary.items():
        stopped = "/".join(f"{m['stopped'][k]:.1f}" for k in KINDS)
        flagged = "/".join(f"{m['flagged'][k]:.1f}" for k in KINDS)
        lines.append(
            f"| {name} | {m['judgments']:,.0f} | {m['agreement']:.4f} ± {m['agreement_sd']:.4f} | "
            f"{m['tau']:.3f} ± {m['tau_sd']:.3f} | {stopped} | {flagged} |"
        )
    return "\n".join(lines)
