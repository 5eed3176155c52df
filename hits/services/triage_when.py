"""A `pairs` batch's triage held back until its gold round shows spammers (`triage_when` "spammers", issue 43).

The bench (bench/RESULTS.md, "The triage only where the gold round shows spammers") measured this rule on
held-out documents: without workers at chance the judge's triage cost the ranking, with them its saving
needed it. So such a batch is made with every HIT whole (its judge run and confidence recorded, the triage
pending: hits.services.batches._triage) and the gold HITs handed out first. Once every gold HIT has its fixed
places submitted, the refit after a submission (scoring/runs/worker_estimates.py, right after the batch's
stop at chance, which reads the same gold evidence) takes the decision, once (`decide_triage`): on if at least
TRIAGE_SPAMMER_SHARE of the workers with enough gold judgments (the batch's stop_after, else
TRIAGE_GOLD_AFTER) are at chance on gold (hits.allocation.policy.share_at_chance); then the non-gold HITs no
worker was handed yet carry only the ACUs the run is unsure of (hits.triage.carry_undecided). A HIT handed out
before keeps all its ACUs and their crowd labels: the machine votes only on pairs no HIT carries
(scoring/runs/triage.py). Off: nothing is trimmed and the run's labels never count (the judge stays the prior).
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from hits import versions
from hits.allocation.policy import TRIAGE_GOLD_AFTER, TRIAGE_SPAMMER_SHARE, share_at_chance, triage_on
from hits.models import HIT, Assignment, Batch, WorkerEstimate
from hits.triage import carry_undecided, decided_pairs

logger = logging.getLogger(__name__)
State = Batch.TriageState


@dataclass(frozen=True)
class GoldRound:
    done: int  # gold HITs with all their fixed places submitted
    hits: int  # gold HITs of the batch

    @property
    def bought(self) -> bool:
        return self.done == self.hits


def gold_round(batch: Batch) -> GoldRound:
    """How many of the batch's gold HITs have their fixed places (max_assignments) submitted and confirmed."""
    counted = Count("assignments", filter=Q(assignments__status__in=Assignment.COUNTED, assignments__confirmed=True))
    gold = batch.hits.filter(gold_answers__isnull=False).annotate(submitted=counted)
    return GoldRound(gold.filter(submitted__gte=F("max_assignments")).count(), gold.count())


def pending(batch: Batch) -> bool:
    return batch.triage_state == State.PENDING


def gold_after(batch: Batch) -> int:
    """The gold judgments a worker needs to be counted: the batch's stop's, else TRIAGE_GOLD_AFTER."""
    return batch.stop_after or TRIAGE_GOLD_AFTER


def decide_triage(batch_id: int) -> str | None:
    """Take the held-back triage's decision if it is pending and the gold round is bought: on or off, with
    the share and counts it read, written once under the batch's lock (a second call changes nothing).
    Returns the state decided now, None when nothing was decided."""
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch_id)
        if not pending(batch) or not (gold := gold_round(batch)).bought:
            return None
        after = gold_after(batch)
        rows = list(WorkerEstimate.objects.filter(batch_id=batch.pk).values_list("chance_upper", "gold_judged"))
        share, spammers, judged = share_at_chance([r[0] for r in rows], [r[1] for r in rows], after)
        on = triage_on(share)
        trimmed = _trim(batch) if on else 0
        batch.triage_state = State.ON if on else State.OFF
        batch.triage_decided_at = timezone.now()
        batch.triage_decision = {
            "share": share,
            "at_chance": spammers,
            "judged": judged,
            "after": after,
            "threshold": TRIAGE_SPAMMER_SHARE,
            "gold_hits": gold.hits,
            "trimmed_hits": trimmed,
        }
        batch.save(update_fields=["triage_state", "triage_decided_at", "triage_decision"])
        if on:
            versions.bump(batch.dataset_id, batch.pk)  # the run's labels now count in the round's scores
    logger.info("allocation batch=%s: triage %s (%s)", batch.pk, batch.triage_state, state_text(batch))
    return batch.triage_state


def _trim(batch: Batch) -> int:
    """The triage on the non-gold first HITs no worker has been handed (no assignment ever made), locked
    first so that a handout waits; returns how many HITs it trimmed (some may be left with no ACU: deleted)."""
    plain = batch.hits.filter(gold_answers__isnull=True, follow_up=0)
    locked = list(plain.select_for_update(of=("self",)).values_list("pk", flat=True))
    untouched = list(
        HIT.objects.filter(pk__in=locked, assignments__isnull=True).select_related("summary").order_by("pk")
    )
    carry_undecided(batch, untouched, decided_pairs(batch.triage_run, batch.triage_confidence))
    return len(untouched)


def state_text(batch: Batch, gold: GoldRound | None = None) -> str | None:
    """The triage's state in the lead's words (the batch page and the API); None: no held-back triage."""
    if batch.triage_run_id is None or batch.triage_state == State.NONE:
        return None
    if pending(batch):
        gold = gold or gold_round(batch)
        return f"Triage: waiting for the gold round ({gold.done} of {gold.hits} gold HITs done)"
    d = batch.triage_decision or {}
    judged, spammers, after = d.get("judged", 0), d.get("at_chance", 0), d.get("after", TRIAGE_GOLD_AFTER)
    rule = f"on from {d.get('threshold', TRIAGE_SPAMMER_SHARE):.0%}"
    if not judged:
        return f"Triage off: no worker has {after}+ gold judgments ({rule})"
    if batch.triage_state == State.OFF and not spammers:
        return f"Triage off: no worker is at chance on gold (0 of {judged})"
    word = "on" if batch.triage_state == State.ON else "off"
    verb = "is" if spammers == 1 else "are"
    return (
        f"Triage {word}: {spammers} of {judged} workers with {after}+ gold judgments {verb} at chance on gold "
        f"({d.get('share') or 0:.0%}; {rule})"
    )
