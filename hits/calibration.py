"""Calibrating rewards to an hourly rate from measured active time per pay bucket."""

from statistics import median

from hits.money import batch_buckets

from .models import Assignment
from .money import hourly_rate, reward_for_rate


def calibration(batch) -> list[dict]:
    """Per bucket: submitted assignments measured, median seconds per HIT, the hourly pay the
    current reward gives, and the reward that would meet the batch's target rate."""
    seconds_by_count: dict[int, list[float]] = {}
    for acu_count, seconds in Assignment.objects.filter(
        hit__batch=batch, status__in=Assignment.COUNTED, active_seconds__gt=0
    ).values_list("hit__acu_count", "active_seconds"):
        seconds_by_count.setdefault(acu_count, []).append(seconds)
    rows = []
    for bucket in batch_buckets(batch):
        times = [s for n, ts in seconds_by_count.items() if bucket.holds(n) for s in ts]
        med = median(times) if times else None
        rows.append(
            {
                "bucket": bucket,
                "measured": len(times),
                "median_seconds": med,
                "hourly": hourly_rate(bucket.reward, med) if med else None,
                "proposed": reward_for_rate(batch.target_hourly_rate, med) if med else None,
            }
        )
    return rows
