"""Per-worker statistics, flags and notes for the lead's workers table (stored with each run).

A flag proposes a decision about a person (the page counts α without the flagged workers, lists
them first, beside Exclude and Block), so it needs gold evidence with a confidence bound, never
the crowd's agreement with itself nor a point estimate alone:
- failed gold: on at least 5 gold labels, the upper 95% confidence bound (Clopper-Pearson) of the
  accuracy on gold is below 0.7 (hits.qualification_bound.below_on_gold).
Notes are information only (never a flag, never counted in α without the flagged):
- too fast: median active seconds per HIT below 40% of the median over all workers (>= 3 HITs);
- low agreement: agreement with the others' majority below 0.6 (>= 20 compared labels).
"""

from collections import defaultdict
from decimal import Decimal
from statistics import median

import numpy as np

from hits.models import Assignment, Batch, Judgment, Worker
from hits.money import hourly_rate
from hits.provider_interface import money_currency
from hits.qualification_bound import below_on_gold
from hits.selectors import counted_assignments
from scoring.stats import agreement
from scoring.stats.worker_quality import worker_quality

TOO_FAST_SHARE, MIN_HITS = 0.4, 3
LOW_AGREEMENT, MIN_COMPARED = 0.6, 20
FAILED_GOLD, MIN_GOLD = 0.7, 5


def _empty() -> dict:
    return {
        "assignments": 0,
        "seconds": [],
        "timed": {},  # {currency: [the rewards, the active seconds]} of the timed work paid here
        "gold_correct": 0,
        "gold_total": 0,
    }


def _assignment_stats(dataset, batch) -> dict[int, dict]:
    """Per worker over the counted assignments: count, active seconds (set, not 0), the rewards and
    seconds of the timed work paid here per currency of the batch that paid it (crowd batches: an
    imported or expert round's reward is no pay, its 0.00 would read as work done for nothing), gold."""
    qs = counted_assignments(dataset, batch, include_excluded=True)
    per: dict[int, dict] = defaultdict(_empty)
    # batch id -> the currency its rewards are in (`money_currency`): the dataset's crowd batches
    paid_in = {b.pk: money_currency(b) for b in Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)}
    for worker_id, seconds, reward, batch_id, kind, g_ok, g_total in qs.values_list(
        "worker_id", "active_seconds", "hit__reward", "hit__batch_id", "hit__batch__kind", "gold_correct", "gold_total"
    ):
        row = per[worker_id]
        row["assignments"] += 1
        if seconds:
            row["seconds"].append(seconds)
            if kind == Batch.Kind.CROWD:
                timed = row["timed"].setdefault(paid_in[batch_id], [Decimal(0), 0.0])
                timed[0] += reward or 0
                timed[1] += seconds
        row["gold_correct"] += g_ok or 0
        row["gold_total"] += g_total or 0
    return dict(per)


def hourly_rates(s: dict) -> dict[str, float]:
    """{currency: what the worker's timed work paid in it paid per hour of that work}, whole cents as
    floats (the stored run's JSON): rewards of batches paying in different currencies are never
    summed (a pound is no dollar); one entry when all their paid work is in one currency."""
    rates = {}
    for currency, (reward, seconds) in sorted(s["timed"].items()):
        rate = hourly_rate(reward, seconds)
        if rate is not None:
            rates[currency] = float(rate)
    return rates


def main_currency(s: dict) -> str | None:
    """The worker's main currency: the one of most of their timed work paid here (the most active
    seconds; a tie, the first code alphabetically), None without any. The workers page sorts *Rate /
    hour* on the rate in it (`scoring.results.worker_pages.hourly_sort_key`): a worker paid in two
    currencies has no one figure (`hourly` is null, never a sum of pounds and dollars) and sorted last."""
    timed = {currency: seconds for currency, (_, seconds) in s["timed"].items() if seconds > 0}
    return min(timed, key=lambda currency: (-timed[currency], currency)) if timed else None


def worker_flags(worker, s: dict) -> list[str]:
    """A worker's flags: gold evidence with a confidence bound only (module docstring)."""
    if worker.is_expert:
        return []  # expert labels (imported or made in an expert round) are the gold, never flagged
    if s["gold_total"] >= MIN_GOLD and below_on_gold(s["gold_correct"], s["gold_total"], FAILED_GOLD):
        return ["failed gold"]
    return []


def _notes(worker, seconds_median, overall, agree, compared: int) -> list[str]:
    """A worker's notes: speed and agreement with the others' majority, shown as information only."""
    if worker.is_expert:
        return []
    notes = []
    if seconds_median is not None and overall and seconds_median < TOO_FAST_SHARE * overall:
        notes.append("too fast")
    if agree is not None and compared >= MIN_COMPARED and agree < LOW_AGREEMENT:
        notes.append("low agreement")
    return notes


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


def _rejected(dataset, batch):
    """Rejected assignments in scope: their judgments never count, but the table keeps their
    workers with the evidence the decision rests on."""
    qs = Assignment.objects.filter(hit__batch__dataset=dataset, status=Assignment.Status.REJECTED)
    return qs.filter(hit__batch=batch) if batch is not None else qs


def _rejected_rows(dataset, batch, judgments, known: set[int]) -> tuple[dict[int, int], list[dict]]:
    """Per worker the number of rejected assignments, and a row for each worker whose work was all
    rejected: gold accuracy and agreement with the counted majority measured on that work."""
    rejected = _rejected(dataset, batch)
    counts: dict[int, int] = defaultdict(int)
    stats: dict[int, dict] = defaultdict(_empty)
    for worker_id, seconds, g_ok, g_total in rejected.values_list(
        "worker_id", "active_seconds", "gold_correct", "gold_total"
    ):
        counts[worker_id] += 1
        if worker_id in known:
            continue
        row = stats[worker_id]
        row["assignments"] += 1
        if seconds:
            row["seconds"].append(seconds)
        row["gold_correct"] += g_ok or 0
        row["gold_total"] += g_total or 0
    if not stats:
        return dict(counts), []
    votes: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for summary, acu, present in zip(
        judgments.summary.tolist(), judgments.acu.tolist(), judgments.present.tolist(), strict=True
    ):
        votes[(summary, acu)][int(bool(present))] += 1
    agree: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for worker_id, summary, acu, present in Judgment.objects.filter(
        assignment__in=rejected.filter(worker_id__in=list(stats))
    ).values_list("assignment__worker_id", "assignment__hit__summary_id", "acu_id", "present"):
        no, yes = votes.get((summary, acu), (0, 0))
        if yes != no:  # a tie is no majority
            agree[worker_id][0] += int(present == (yes > no))
            agree[worker_id][1] += 1
    rows = []
    for worker in Worker.objects.filter(pk__in=list(stats)):
        s = stats[worker.pk]
        same, compared = agree[worker.pk]
        agreement_share = same / compared if compared else None
        med = median(s["seconds"]) if s["seconds"] else None
        rows.append(
            {
                "worker_id": worker.pk,
                "worker": worker.external_id,
                "provider": worker.provider,
                "assignments": 0,
                "rejected": counts[worker.pk],
                "labels": 0,
                "agreement": agreement_share,
                "gold_accuracy": s["gold_correct"] / s["gold_total"] if s["gold_total"] else None,
                "median_seconds": med,
                "hourly": None,
                "hourly_rates": {},
                "hourly_currency": None,
                "flags": worker_flags(worker, s),
                "notes": _notes(worker, None, None, agreement_share, compared),
                "excluded": worker.excluded,
                "blocked": worker.blocked_at is not None,
            }
        )
    return dict(counts), rows


def worker_table(dataset, batch, judgments, acu_counts_per_row, counted_alpha: dict | None = None) -> dict:
    """Rows per worker, and both alphas with and without the flagged workers. `counted_alpha`:
    both alphas over the judgments of the workers not excluded, already computed by the
    caller; they are the alphas without the flagged when no worker is flagged."""
    if len(judgments) == 0:
        return {
            "rows": _rejected_rows(dataset, batch, judgments, set())[1],
            "alpha_without_flagged": None,
            "flagged": 0,
        }
    quality = worker_quality(judgments.summary, judgments.acu, judgments.worker, judgments.present)
    stats = _assignment_stats(dataset, batch)
    info = {w.pk: w for w in Worker.objects.filter(pk__in=quality.workers.tolist())}
    medians = {w: median(s["seconds"]) for w, s in stats.items() if len(s["seconds"]) >= MIN_HITS}
    overall = median(medians.values()) if medians else None
    rows = []
    for i, wid in enumerate(quality.workers.tolist()):
        s = stats.get(wid) or _empty()
        med = median(s["seconds"]) if s["seconds"] else None
        # What the timed work paid here paid per hour of it, in cents as the calibration table reads
        # rates (a median time against a mean reward is not a rate anyone was paid when the
        # worker's HITs pay different buckets); a float in the stored run, whole cents.
        # Per currency of the batches that paid it; "hourly" only when there is one; the table
        # sorts on the rate in the main currency (`main_currency`).
        rates = hourly_rates(s)
        hourly = next(iter(rates.values())) if len(rates) == 1 else None
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
                "hourly_rates": rates,
                "hourly_currency": main_currency(s),
                "flags": worker_flags(w, s),
                "notes": _notes(w, medians.get(wid), overall, agree, quality.compared[i]),
                "excluded": w.excluded,
                "blocked": w.blocked_at is not None,
            }
        )
    rejected, rejected_rows = _rejected_rows(dataset, batch, judgments, set(info))
    for row in rows:
        row["rejected"] = rejected.get(row["worker_id"], 0)
    flagged = {r["worker_id"] for r in rows if r["flags"]}
    rows += rejected_rows  # their judgments count nowhere: no alpha to leave them out of
    keep = ~np.isin(judgments.worker, list(flagged)) & ~judgments.excluded
    if not flagged and counted_alpha is not None:
        return {"rows": rows, "alpha_without_flagged": counted_alpha if keep.any() else None, "flagged": 0}
    return {
        "rows": rows,
        "alpha_without_flagged": _alphas_without(judgments, keep, acu_counts_per_row),
        "flagged": len(flagged),
    }
