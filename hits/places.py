"""Open places per HIT: the counter the handout reads instead of counting assignments.

`HIT.open_places` is max_assignments minus the HIT's active assignments (assigned, submitted,
approved). The handout decrements it in the transaction that creates the assignment; every other
path that moves assignments in or out of the active states calls `refresh` for the HITs it
touched, which recounts just those HITs' assignments in one UPDATE.
"""

from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce, Greatest

from hits.models import HIT, Assignment


def _active_count():
    return Coalesce(
        Subquery(
            Assignment.objects.filter(hit_id=OuterRef("pk"), status__in=Assignment.ACTIVE)
            .order_by()
            .values("hit_id")
            .annotate(n=Count("pk"))
            .values("n"),
            output_field=IntegerField(),
        ),
        Value(0),
    )


def refresh(*, hit_ids=None, batch_id=None, assignments=None) -> int:
    """Recount the open places of some HITs (by ids, a batch, or the HITs of an assignment
    queryset); returns how many HITs were updated."""
    hits = HIT.objects.all()
    if hit_ids is not None:
        hits = hits.filter(pk__in=list(hit_ids))
    if batch_id is not None:
        hits = hits.filter(batch_id=batch_id)
    if assignments is not None:
        hits = hits.filter(pk__in=assignments.values("hit_id"))
    return hits.update(open_places=Greatest(F("max_assignments") - _active_count(), Value(0)))


def take_one(hit_id: int) -> int:
    """One place of a HIT is now held (inside the handout's transaction)."""
    return HIT.objects.filter(pk=hit_id, open_places__gt=0).update(open_places=F("open_places") - 1)


def open_one_more(hit_id: int, most: int) -> bool:
    """One more place of an adaptive batch's HIT (inside the transaction of the submission that
    decided it, the HIT locked), never past `most` places; True when it opened."""
    return bool(
        HIT.objects.filter(pk=hit_id, max_assignments__lt=most).update(
            max_assignments=F("max_assignments") + 1,
            open_places=F("open_places") + 1,
            extra_places=F("extra_places") + 1,
        )
    )


def open_follow_up(first: HIT, acu_ids: list[int], reward) -> HIT:
    """A `pairs` batch's next place for a summary (inside the transaction of the submission that
    decided it, its first HIT locked): a follow-up HIT of one place asking only `acu_ids`, paid
    `reward` (the batch's bucket of that many ACUs), in the first HIT's turn and priority."""
    follow_ups = HIT.objects.filter(batch_id=first.batch_id, summary_id=first.summary_id).count()
    return HIT.objects.create(
        batch_id=first.batch_id,
        summary_id=first.summary_id,
        follow_up=follow_ups,
        acu_ids=acu_ids,
        acu_count=len(acu_ids),
        reward=reward,
        max_assignments=1,
        open_places=1,
        turn=first.turn,
        priority=first.priority,
    )
