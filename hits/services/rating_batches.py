"""A rating batch's rating round and HITs (hits.ratings): the round it fills, and one HIT per
example to rate (hits.services.batches.create_batch builds the batch around them)."""

from annotation.models import Dataset, Document, RatingRound, Summary
from hits.batch_fields import BatchError
from hits.models import Batch
from hits.ratings import PROTOCOLS

DEFAULT_ROUND = "collected"


def rating_round(dataset: Dataset, name: str, protocol: str, created_by=None) -> RatingRound:
    """The rating round a new rating batch fills: found by name or made; refused when it holds
    imported ratings or another batch of the same protocol (one rater per summary and protocol)."""
    name = (name or "").strip() or DEFAULT_ROUND
    round_, _ = RatingRound.objects.get_or_create(
        dataset=dataset, name=name, defaults={"kind": RatingRound.Kind.CROWD, "created_by": created_by}
    )
    if round_.kind != RatingRound.Kind.CROWD:
        raise BatchError(f"The rating round “{name}” holds imported ratings: name another round for this batch.")
    other = Batch.objects.filter(rating_round=round_, protocol=protocol).first()
    if other is not None:
        raise BatchError(
            f"The rating round “{name}” has a {PROTOCOLS[protocol].label} batch already (“{other.name}”): "
            "name another round for this batch."
        )
    return round_


def example_anchors(dataset: Dataset, protocol: str, systems, documents) -> list[tuple[Summary, int]]:
    """One (summary standing for the example, number of summaries to rate) per document to rate:
    the chosen documents (all when None) with summaries of the chosen systems, and for Ref-based
    a reference to show. The first summary in system order stands for the example on its HIT."""
    docs = Document.objects.filter(dataset=dataset).order_by("position")
    if documents is not None:
        docs = docs.filter(pk__in=[d.pk for d in documents])
    if PROTOCOLS[protocol].shows == "reference":
        docs = docs.filter(reference__sentences__isnull=False).distinct()
    summaries = Summary.objects.filter(document__in=docs)
    if systems:
        summaries = summaries.filter(system__in=systems)
    by_document: dict[int, list[Summary]] = {}
    for summary in summaries.order_by("document__position", "system__name", "pk"):
        by_document.setdefault(summary.document_id, []).append(summary)
    if not by_document:
        need = " with a reference" if PROTOCOLS[protocol].shows == "reference" else ""
        raise BatchError(f"No document{need} has a summary of the chosen systems.")
    return [(rows[0], len(rows)) for rows in by_document.values()]
