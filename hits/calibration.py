"""Calibrating rewards to an hourly rate from measured active time per pay bucket."""

from statistics import fmean, median

from hits.money import batch_buckets

from .models import HIT
from .money import hourly_rate, reward_for_rate
from .selectors import timed_assignments

# Fewer timed HITs than this and a bucket's mean is noise (one 2-second HIT read as $450/hour and
# proposed $0.01): no rate and no reward are read from it, here nor in a Prolific session's minutes.
MIN_TIMED_HITS = 10


def too_few_timed(measured: int) -> str | None:
    """Why no rate is read from `measured` timed HITs, or None when they are enough."""
    if measured >= MIN_TIMED_HITS:
        return None
    return f"too few timed HITs: {measured} of at least {MIN_TIMED_HITS}"


def calibration(batch) -> list[dict]:
    """Per bucket: the reward its HITs pay, submitted assignments measured, their median and mean
    seconds per HIT, the hourly pay that reward gives, and the reward that would meet the batch's
    target rate. A bucket with fewer than MIN_TIMED_HITS timed HITs gets neither rate nor reward,
    and says why (`too_few`).

    The rate is read from the mean: a worker paid per HIT earns the reward times the HITs done over
    the time they took, the reward over the mean time. Times per HIT are right-skewed (many quick
    HITs, a few slow ones), so a reward set from the median paid less than the target an hour
    (as `prolific.plans.seconds_per_hit` takes the mean for a session's minutes).

    The reward is what the bucket's HITs pay, which is the bucket's unless a provider paying per
    session priced every HIT alike (Prolific, a panel paying per session: the mean, see
    `alike_price`); the effective rate is read from it, not from the bucket's nominal reward."""
    seconds_by_count: dict[int, list[float]] = {}
    for acu_count, seconds in timed_assignments(batch).values_list("hit__acu_count", "active_seconds"):
        if seconds is not None:  # timed_assignments stores a time; for the type checker
            seconds_by_count.setdefault(acu_count, []).append(seconds)
    rewards_by_count: dict[int, set] = {}
    for acu_count, reward in HIT.objects.filter(batch=batch).values_list("acu_count", "reward").distinct():
        rewards_by_count.setdefault(acu_count, set()).add(reward)
    rows = []
    for bucket in batch_buckets(batch):
        times = [s for n, ts in seconds_by_count.items() if bucket.holds(n) for s in ts]
        paid = {r for n, rs in rewards_by_count.items() if bucket.holds(n) for r in rs}
        reward = paid.pop() if len(paid) == 1 else bucket.reward
        too_few = too_few_timed(len(times))
        mean = fmean(times) if times and not too_few else None
        rows.append(
            {
                "bucket": bucket,
                "reward": reward,
                "measured": len(times),
                "median_seconds": median(times) if times else None,
                "mean_seconds": fmean(times) if times else None,
                "too_few": too_few,
                "hourly": hourly_rate(reward, mean) if mean else None,
                "proposed": reward_for_rate(batch.target_hourly_rate, mean) if mean else None,
            }
        )
    return rows
