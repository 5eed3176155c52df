"""Per-worker statistics and flags for the lead's workers table (stored with each run).

Flags (documented thresholds, each needing enough evidence):
- too fast: median active seconds per HIT below 40% of the median over all workers (>= 3 HITs);
- low agreement: agreement with the others' majority below 0.6 (>= 20 compared labels);
- failed gold: accuracy on gold items below 0.7 (>= 5 gold labels).
"""

from collections import defaultdict
from decimal import Decimal
from statistics import median

import numpy as np

from hits.models import Worker
from hits.selectors import counted_assignments
from scoring.stats import agreement
from scoring.stats.worker_quality import worker_quality

TOO_FAST_SHARE, MIN_HITS = 0.4, 3
LOW_AGREEMENT, MIN_COMPARED = 0.6, 20
FAILED_GOLD, MIN_GOLD = 0.7, 5


def _empty() -> dict:
    return {"assignments": 0, "seconds": [], "reward": Decimal(0), "gold_correct": 0, "gold_total": 0}


def _assignment_stats(dataset, batch) -> dict[int, dict]:
    """Per worker over the counted assignments: count, active seconds (set, not 0), rewards, gold."""
    qs = counted_assignments(dataset, batch, include_excluded=True)
    per: dict[int, dict] = defaultdict(_empty)
    for worker_id, seconds, reward, g_ok, g_total in qs.values_list(
        "worker_id", "active_seconds", "hit__reward", "gold_correct", "gold_total"
    ):
        row = per[worker_id]
        row["assignments"] += 1
        row["reward"] += reward or 0
        if seconds:
            row["seconds"].append(seconds)
        row["gold_correct"] += g_ok or 0
        row["gold_total"] += g_total or 0
    return dict(per)


def _flags(worker, seconds_median, overall, agree, compared: int, s: dict) -> list[str]:
    """A worker's flags, each with enough evidence (the thresholds above)."""
    if worker.provider == Worker.Provider.IMPORTED:
        return []  # expert labels (imported or made in an expert round) are the gold, never flagged
    gold = s["gold_correct"] / s["gold_total"] if s["gold_total"] else None
    flags = []
    if seconds_median is not None and overall and seconds_median < TOO_FAST_SHARE * overall:
        flags.append("too fast")
    if agree is not None and compared >= MIN_COMPARED and agree < LOW_AGREEMENT:
        flags.append("low agreement")
    if gold is not None and s["gold_total"] >= MIN_GOLD and gold < FAILED_GOLD:
        flags.append("failed gold")
    return flags


def _alphas_without(judgments, keep, acu_counts_per_row) -> dict | None:
    """Both alphas over the judgments kept (None when none is)."""
    if not keep.any():
        return None
    summary, acu, worker, present = (
        judgments.summary[keep],
        judgments.acu[keep],
        judgments.worker[keep],
        judgments.present[keep],
    )
    return {
        "acu_level": agreement.acu_level_alpha(summary, acu, worker, present),
        "summary_level": agreement.summary_level_alpha(
            summary, acu, worker, present, acu_counts=acu_counts_per_row[keep]
        ),
    }


def worker_table(dataset, batch, judgments, acu_counts_per_row, counted_alpha: dict | None = None) -> dict:
    """Rows per worker, and both alphas with and without the flagged workers. `counted_alpha`:
    both alphas over the judgments of the workers not excluded, already computed by the
    caller; they are the alphas without the flagged when no worker is flagged."""
    if len(judgments) == 0:
        return {"rows": [], "alpha_without_flagged": None, "flagged": 0}
    quality = worker_quality(judgments.summary, judgments.acu, judgments.worker, judgments.present)
    stats = _assignment_stats(dataset, batch)
    info = {w.pk: w for w in Worker.objects.filter(pk__in=quality.workers.tolist())}
    medians = {w: median(s["seconds"]) for w, s in stats.items() if len(s["seconds"]) >= MIN_HITS}
    overall = median(medians.values()) if medians else None
    rows = []
    for i, wid in enumerate(quality.workers.tolist()):
        s = stats.get(wid) or _empty()
        med = median(s["seconds"]) if s["seconds"] else None
        hourly = float(s["reward"] / s["assignments"]) * 3600 / med if med and s["assignments"] else None
        agree = float(quality.agreement[i]) if quality.compared[i] else None
        w = info[wid]
        rows.append(
            {
                "worker_id": wid,
                "worker": w.external_id,
                "provider": w.provider,
                "assignments": s["assignments"],
                "labels": int(quality.labels[i]),
                "agreement": agree,
                "gold_accuracy": s["gold_correct"] / s["gold_total"] if s["gold_total"] else None,
                "median_seconds": med,
                "hourly": hourly,
                "flags": _flags(w, medians.get(wid), overall, agree, quality.compared[i], s),
                "excluded": w.excluded,
                "blocked": w.blocked_at is not None,
            }
        )
    flagged = {r["worker_id"] for r in rows if r["flags"]}
    keep = ~np.isin(judgments.worker, list(flagged)) & ~judgments.excluded
    if not flagged and counted_alpha is not None:
        return {"rows": rows, "alpha_without_flagged": counted_alpha if keep.any() else None, "flagged": 0}
    return {
        "rows": rows,
        "alpha_without_flagged": _alphas_without(judgments, keep, acu_counts_per_row),
        "flagged": len(flagged),
    }
