"""The gold guard of an adaptive batch (issue 43): it never keeps paying for fewer judgments with lower
agreement with the experts than fixed places.

After each refit of the worker estimates (scoring/runs/worker_estimates.py refit_estimates) `guard_on_gold`
reads the counted answers of the batch's gold HITs (answered at the batch's fixed places: a gold HIT gets
the assignments per HIT and no follow-up) in the order they arrived (submission time), replays the batch's
own rule on each gold pair with at least the fixed answers (hits.allocation.gold_guard.replay_pairs for a
`pairs` batch, with each pair's prior; replay_hits for `adaptive`, with the rule of its later HITs: the
pilot's threshold once set; either's label is the posterior of the answers it read, as the round's scores
label it: scoring/runs/pairs.py) and compares its labels with the majority of the first fixed answers, both
against the gold answers (hits.allocation.gold_guard.compare: exact one-sided McNemar test at 95%). When
the rule is worse on gold the batch stops saving, for good: `gold_guard_at` and the figures are stored (the
batch page shows them), it is logged, and from then on a `pairs` batch's pairs settle only after at least
the fixed answers (hits.allocation.service.decide_pairs) and an `adaptive` batch's HITs get at least the
fixed places (hits.allocation.policy.at_least_fixed). What was settled before is not reopened.
"""

import logging
from collections import Counter

import numpy as np
from django.utils import timezone

from hits.allocation.gold_guard import GoldCheck, compare, first_majority, replay_hits, replay_pairs
from hits.allocation.policy import ADAPTIVE_KINDS, PAIRS
from hits.allocation.service import batch_prior, later_rule, pair_priors, pilot_of, policy_of, worker_estimates
from hits.models import Batch
from hits.selectors import counted_judgments

logger = logging.getLogger(__name__)


def gold_answers(batch: Batch) -> tuple[dict[tuple[int, int], bool], list[tuple]]:
    """The batch's gold labels {(summary, ACU): present} and the counted answers on its gold HITs,
    (summary, ACU, worker, said) in the order they arrived (submission time, then assignment)."""
    gold = {
        (int(summary), int(acu)): bool(present)
        for summary, answers in batch.hits.filter(gold_answers__isnull=False).values_list("summary_id", "gold_answers")
        for acu, present in (answers or {}).items()
    }
    rows = list(
        counted_judgments(batch=batch)
        .filter(assignment__hit__gold_answers__isnull=False)
        .order_by("assignment__submitted_at", "assignment_id", "acu_id")
        .values_list("assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present")
    )
    return gold, rows


def gold_items(batch: Batch, fixed: int) -> tuple[list[tuple[int, int]], list[bool], list[tuple]]:
    """The gold pairs answered at least `fixed` times (keys), their gold labels, and their answers in
    arrival order as (item index, worker, said) rows."""
    gold, rows = gold_answers(batch)
    counts = Counter((s, a) for s, a, _, _ in rows if (s, a) in gold)
    keys = sorted(key for key, n in counts.items() if n >= fixed)
    index = {key: i for i, key in enumerate(keys)}
    return keys, [gold[key] for key in keys], [(index[(s, a)], w, p) for s, a, w, p in rows if (s, a) in index]


def check_gold(batch: Batch) -> GoldCheck | None:
    """The batch's rule against its fixed places on its gold pairs (module docstring); None without
    a gold pair answered at the fixed places yet."""
    fixed = batch.assignments_per_hit
    keys, gold, rows = gold_items(batch, fixed)
    if not keys:
        return None
    items = np.array([r[0] for r in rows], dtype=np.int64)
    said = np.array([r[2] for r in rows], dtype=bool)
    sens, spec = worker_estimates(batch, [r[1] for r in rows])
    n = len(keys)
    if batch.allocation == PAIRS:
        priors = pair_priors(batch, gold=True)
        prior = np.array([priors.get(key, batch_prior(batch)) for key in keys], dtype=float)
        label, bought = replay_pairs(
            items, said, sens, spec, prior, batch.allocation_threshold, batch.allocation_min, batch.allocation_max, n
        )
    else:
        policy = policy_of(batch)
        rule = later_rule(batch, policy, pilot_of(batch, policy))
        _, hit_of_item = np.unique([s for s, _ in keys], return_inverse=True)
        label, bought = replay_hits(hit_of_item.ravel(), items, said, sens, spec, batch_prior(batch), rule, n)
    fixed_label, counted = first_majority(items, said, fixed, n)
    return compare(label, fixed_label, gold, bought, counted, fixed)


def guard_on_gold(batch: Batch) -> GoldCheck | None:
    """Check an adaptive batch that still saves (check_gold) and, when its rule is worse on gold, make it
    stop saving: record when and the figures on the batch, and log it. Returns the check (None: not an
    adaptive batch, already stopped, or no gold pair answered at the fixed places yet)."""
    if batch.allocation not in ADAPTIVE_KINDS or batch.gold_guard_at is not None:
        return None
    check = check_gold(batch)
    if check is None or not check.worse:
        return check
    figures = {**check.as_dict(), "sentence": check.sentence()}
    stopped = Batch.objects.filter(pk=batch.pk, gold_guard_at__isnull=True).update(
        gold_guard_at=timezone.now(), gold_guard=figures
    )
    if stopped:
        logger.warning(
            "allocation batch=%s: stops saving, from now on at least %d places per pair: %s",
            batch.pk,
            batch.assignments_per_hit,
            figures["sentence"],
        )
    return check
