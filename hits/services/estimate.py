"""What a batch would be before it exists: its references (by document count or an explicit list), HITs,
assignments and cost with the default pay buckets (reads only; the new batch form's live count)."""

from decimal import Decimal

from django.db.models import Count

from annotation.models import ACU, Document, Summary
from annotation.services.authoring import usable_for_crowd
from hits.batch_fields import RATING_BUCKETS, BatchError
from hits.money import DEFAULT_BUCKETS, Bucket, bucket_for, cents
from hits.provider_interface import get_provider
from hits.ratings import PROTOCOLS
from hits.services import rating_batches


class SampleError(ValueError):
    """A document choice that names nothing usable, with a message for the lead."""


def chosen_references(dataset, *, documents: int | None = None, document_ids: str = ""):
    """The approved references a batch covers: those of the listed document ids (one per line or
    comma-separated, all must be approved), else the first `documents` in document order, else all."""
    approved = usable_for_crowd(dataset).order_by("document__position")
    wanted = [x.strip() for x in document_ids.replace(",", "\n").splitlines() if x.strip()]
    if wanted:
        found = {
            r.document.external_id: r
            for r in approved.select_related("document").filter(document__external_id__in=wanted)
        }
        missing = [w for w in wanted if w not in found]
        if missing:
            raise SampleError(
                f"Not an approved reference of this dataset: {', '.join(missing[:10])}"
                f"{' …' if len(missing) > 10 else ''}."
            )
        return [found[w] for w in dict.fromkeys(wanted)]
    if documents:
        return list(approved[:documents])
    return None  # all approved references


def estimate(
    dataset,
    *,
    provider: str,
    assignments: int,
    systems=None,
    references=None,
    budget=None,
    protocol: str = "",
    documents=None,
) -> dict:
    """HITs, assignments and cost of a new batch with these choices; a rating batch (`protocol`,
    hits.ratings): one HIT per chosen document (`documents`; None: all), paid by its summaries."""
    if protocol in PROTOCOLS:
        buckets = [Bucket(*b) for b in RATING_BUCKETS]
        try:
            counts = [n for _, n in rating_batches.example_anchors(dataset, protocol, systems, documents)]
        except BatchError:
            counts = []
    else:
        buckets = [Bucket(*b) for b in DEFAULT_BUCKETS]
        counts = _acu_counts(dataset, systems, references)
    adapter = get_provider(provider)
    hits = 0
    rewards = fees = Decimal("0.00")
    for n in counts:
        reward = bucket_for(buckets, n).reward
        hits += 1
        rewards += reward * assignments
        fees += adapter.fee(reward, assignments) * assignments
    total = cents(rewards) + cents(fees)
    return {
        "hits": hits,
        "assignments": hits * assignments,
        "rewards": cents(rewards),
        "fees": cents(fees),
        "total": total,
        "over_budget": budget is not None and total > budget,
    }


def _acu_counts(dataset, systems, references) -> list[int]:
    """The ACU count of each HIT an ACU batch of these choices would have (one per summary with ACUs)."""
    refs = usable_for_crowd(dataset) if references is None else references
    acu_counts = dict(
        ACU.objects.filter(reference__in=refs).values_list("reference_id").annotate(n=Count("pk")).order_by()
    )
    summaries = Summary.objects.filter(document__reference__in=refs)
    if systems:
        summaries = summaries.filter(system__in=systems)
    counts = (acu_counts.get(r) for r in summaries.values_list("document__reference", flat=True))
    return [n for n in counts if n]


def chosen_documents(dataset, *, documents: int | None = None, document_ids: str = ""):
    """The documents a rating batch covers (no approved reference needed): those of the listed
    ids, else the first `documents` in document order, else None (all)."""
    docs = Document.objects.filter(dataset=dataset).order_by("position")
    wanted = [x.strip() for x in document_ids.replace(",", "\n").splitlines() if x.strip()]
    if wanted:
        found = {d.external_id: d for d in docs.filter(external_id__in=wanted)}
        missing = [w for w in wanted if w not in found]
        if missing:
            raise SampleError(
                f"Not a document of this dataset: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}."
            )
        return [found[w] for w in dict.fromkeys(wanted)]
    if documents:
        return list(docs[:documents])
    return None
