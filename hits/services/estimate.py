"""What a batch would be before it exists: its references (by document count or an explicit list), HITs,
assignments and cost, the draft's own figures (reads only; the new batch form's live count)."""

from dataclasses import replace

from annotation.models import Document
from annotation.services.authoring import usable_for_crowd
from hits.batch_fields import BatchSpec
from hits.services import batch_plan


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
    dataset, spec: BatchSpec, *, systems=None, references=None, documents=None, qualification_test=None
) -> dict:
    """HITs, assignments (their most places) and cost of a new batch with these settings and choices:
    the draft's own estimate (`cost_estimate`, what publishing checks against the budget) before the
    draft exists, priced from the plan `create_batch` writes (hits.services.batch_plan: gold HITs, a
    `pairs` batch's triage), with its lines beyond the HITs' places (`extras`, counted in the totals: a
    Prolific batch's screening study when it has `qualification_test`). Writes nothing; BatchError when
    creating the draft would be refused so."""
    if qualification_test is not None:
        spec = replace(spec, qualification_test_id=qualification_test.pk)
    planned = batch_plan.plan(dataset, spec, systems=systems, references=references, documents=documents)
    cost = batch_plan.price(spec, list(spec.buckets), planned.counts(), batch_plan.Places.of_spec(spec))
    figures = {k: cost[k] for k in ("hits", "assignments", "rewards", "fees", "total", "extras")}
    figures["over_budget"] = spec.budget is not None and cost["total"] > spec.budget
    return figures


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
