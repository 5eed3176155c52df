"""A rating batch's answers (hits.ratings): a submission's ratings, and the projection of the
counted ratings to its rating round's ProtocolRating rows, which the Protocols page reads. (Its
HITs and round: hits.services.rating_batches.)

Which ratings count is the ACU rule (submitted or approved, confirmed by the provider, the
worker not excluded), applied by `project` after every write that changes what counts
(`hits.signals.judgments_changed`: submissions, rejections, exclusions, provider confirmations,
releases), so the round always holds exactly the counted ratings.
"""

from django.db import transaction

from annotation.models import ProtocolRating, RatingRound
from hits.models import Assignment, Batch
from hits.ratings.models import Rating


def stored(assignment: Assignment) -> dict[int, int]:
    return dict(Rating.objects.filter(assignment=assignment).values_list("summary_id", "score"))


def store(assignment: Assignment, parsed: dict[int, int]) -> None:
    """The submission's ratings, in the submission's transaction."""
    Rating.objects.bulk_create(
        [Rating(assignment=assignment, summary_id=s, score=v) for s, v in sorted(parsed.items())]
    )


def rater(provider: str, external_id: str) -> str:
    """A worker's name among a rating round's raters, as the lead knows them (provider and id): the
    same in every batch of the round, so the Protocols page's annotator case study pairs their
    Prior and Ref-free ratings."""
    return f"{provider}:{external_id}"[:100]


def project(batch_id: int) -> int | None:
    """Rewrite the rating batch's ratings in its round: exactly the counted ones. None: not a rating batch."""
    batch = Batch.objects.filter(pk=batch_id, rating_round__isnull=False).exclude(protocol="").first()
    if batch is None or batch.rating_round_id is None:
        return None
    round_id: int = batch.rating_round_id
    counted = Rating.objects.filter(
        assignment__hit__batch_id=batch.pk,
        assignment__status__in=Assignment.COUNTED,
        assignment__confirmed=True,
        assignment__worker__excluded=False,
    ).values_list("summary_id", "assignment__worker__provider", "assignment__worker__external_id", "score")
    with transaction.atomic():
        # one projection of the round at a time (two batches' submissions may commit at once)
        RatingRound.objects.select_for_update().filter(pk=round_id).first()
        ProtocolRating.objects.filter(round_id=round_id, protocol=batch.protocol).delete()
        rows = ProtocolRating.objects.bulk_create(
            [
                ProtocolRating(round_id=round_id, summary_id=s, protocol=batch.protocol, rater=rater(p, w), score=v)
                for s, p, w, v in counted.order_by("summary_id", "assignment__worker_id")
            ]
        )
    return len(rows)


def on_judgments_changed(
    sender, dataset_id: int, batch_id: int | None = None, rating: bool | None = None, **kwargs
) -> None:
    """`hits.signals.judgments_changed` (after the commit): a rating batch's round follows its counted
    ratings (`rating` False: the writer knew it was an ACU batch, nothing to look up)."""
    if batch_id and rating is not False:
        project(batch_id)
