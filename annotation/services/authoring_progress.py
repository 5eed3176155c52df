"""The lead's authoring overview: references per state, per-author progress and time, the time
drafts save, and the human-unit budget (reads only; the writes are in annotation.services.authoring)."""

from statistics import median

from django.contrib.auth import get_user_model
from django.db.models import Count

from annotation.models import ACU, AuthoringTime, Dataset, DraftACU, Reference, ReferenceSentence
from annotation.selectors import reference_states
from annotation.services.authoring import review_gap


def time_with_and_without_drafts(dataset: Dataset) -> dict:
    """Median active writing minutes per reference, for references whose writer had drafts
    (any drafter suggestion or pre-draft) and for those written from an empty editor, with
    the median minutes per ACU; `saved_percent` compares the medians per reference."""
    drafted = set(DraftACU.objects.filter(reference__document__dataset=dataset).values_list("reference_id", flat=True))
    groups: dict[str, list[tuple[float, int]]] = {"with": [], "without": []}
    times = AuthoringTime.objects.filter(
        reference__document__dataset=dataset, kind=AuthoringTime.Kind.WRITING, seconds__gt=0
    ).values_list("reference_id", "seconds")
    acus = dict(
        ACU.objects.filter(reference__document__dataset=dataset, machine=False)
        .values_list("reference_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    per_reference: dict[int, float] = {}
    for reference_id, seconds in times:
        per_reference[reference_id] = per_reference.get(reference_id, 0.0) + seconds
    for reference_id, seconds in per_reference.items():
        groups["with" if reference_id in drafted else "without"].append((seconds / 60, acus.get(reference_id, 0)))
    out: dict = {}
    for key, rows in groups.items():
        out[key] = {
            "references": len(rows),
            "median_minutes": median(m for m, _ in rows) if rows else None,
            "median_minutes_per_acu": median(m / n for m, n in rows if n) if any(n for _, n in rows) else None,
        }
    w, wo = out["with"]["median_minutes"], out["without"]["median_minutes"]
    out["saved_percent"] = 100 * (wo - w) / wo if w is not None and wo else None
    return out


def authoring_overview(dataset: Dataset) -> dict:
    """Per author: references assigned, to do, writing, in review, changes requested, approved;
    ACUs written; median active minutes and ACUs per reference."""
    refs = Reference.objects.filter(document__dataset=dataset)
    totals = reference_states(dataset)
    labels = dict(Reference.Status.choices)
    rows = []
    writer_ids = set(refs.exclude(writer=None).values_list("writer", flat=True))
    for person in get_user_model().objects.filter(pk__in=writer_ids).order_by("username"):
        mine = refs.filter(writer=person)
        counts = dict(mine.values_list("status").annotate(n=Count("pk")).order_by())
        minutes = [
            t / 60
            for t in AuthoringTime.objects.filter(
                reference__in=mine, user=person, kind=AuthoringTime.Kind.WRITING, seconds__gt=0
            ).values_list("seconds", flat=True)
        ]
        acus = ACU.objects.filter(reference__in=mine, author=person).count()
        started = sum(counts.get(s, 0) for s in Reference.Status.values if s != Reference.Status.TODO)
        rows.append(
            {
                "author": person,
                "assigned": sum(counts.values()),
                # the header's states, one column each: an author's counts add up to the header's
                # with the unassigned references
                "todo": counts.get(Reference.Status.TODO, 0),
                "writing": counts.get(Reference.Status.WRITING, 0),
                "in_review": counts.get(Reference.Status.IN_REVIEW, 0),
                "changes": counts.get(Reference.Status.CHANGES, 0),
                "approved": counts.get(Reference.Status.APPROVED, 0),
                "acus": acus,
                "median_minutes": median(minutes) if minutes else None,
                "acus_per_reference": acus / started if started else None,
            }
        )
    return {
        "totals": totals,
        "states": [{"status": s, "label": labels[s], "count": n} for s, n in totals.items()],
        "unassigned": refs.filter(writer=None).exclude(status=Reference.Status.APPROVED).count(),
        "rows": rows,
        "draft_time": time_with_and_without_drafts(dataset),
        "budget": budget_overview(dataset),
        "review_gap": review_gap(dataset),
    }


def budget_overview(dataset: Dataset) -> dict:
    """Sentences by budget role and the machine units in place (for the lead's page)."""
    sentences = ReferenceSentence.objects.filter(reference__document__dataset=dataset)
    counts = dict(sentences.values_list("budget").annotate(n=Count("pk")).order_by())
    total = sum(counts.values())
    return {
        "human": counts.get(ReferenceSentence.Budget.HUMAN, 0),
        "machine": counts.get(ReferenceSentence.Budget.MACHINE, 0),
        "sentences": total,
        "machine_units": ACU.objects.filter(reference__document__dataset=dataset, machine=True).count(),
    }
