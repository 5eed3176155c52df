"""The lead's next step on the home page: import → assign authors → create a batch → read results, with counts (reads only)."""

from django.db.models import Count, Q

from annotation.models import Dataset, Reference
from annotation.services.authoring import authors
from hits.models import Assignment, Batch
from hits.selectors import dataset_counts


def dataset_rows():
    """Each dataset with its counts (`hits.selectors.dataset_counts`), for the home page and /datasets/."""
    datasets = list(Dataset.objects.order_by("name"))
    counts = dataset_counts([d.pk for d in datasets])
    return [{"dataset": d, **counts[d.pk]} for d in datasets]


def lead_steps() -> dict:
    """The four steps of the lead's loop, each with its count and whether it is done; `next` is the first not done."""
    datasets = Dataset.objects.count()
    refs = Reference.objects.aggregate(
        total=Count("pk"),
        assigned=Count("pk", filter=Q(writer__isnull=False)),
        approved=Count("pk", filter=Q(status=Reference.Status.APPROVED)),
    )
    crowd = Batch.objects.filter(kind=Batch.Kind.CROWD)
    published = crowd.exclude(status=Batch.Status.DRAFT).count()
    judged = Assignment.objects.filter(hit__batch__kind=Batch.Kind.CROWD, status__in=Assignment.COUNTED).count()
    first = Dataset.objects.order_by("pk").first()
    n_authors = authors().count()
    steps = [
        {
            "key": "import",
            "title": "Import a dataset",
            "done": datasets > 0,
            "count": f"{datasets} dataset(s)",
            "url_name": "dataset_import",
            "arg": None,
        },
        {
            "key": "authors",
            "title": "Assign authors to write and review ACUs",
            "done": refs["approved"] > 0 or (refs["total"] > 0 and refs["assigned"] == refs["total"]),
            "count": f"{refs['assigned']} of {refs['total']} references assigned, {refs['approved']} approved, {n_authors} author(s)",
            "url_name": "authoring_overview",
            "arg": first.pk if first else None,
        },
        {
            "key": "batch",
            "title": "Create and publish a crowd batch",
            "done": published > 0,
            "count": f"{crowd.count()} batch(es), {published} published",
            "url_name": "batch_list",
            "arg": first.pk if first else None,
        },
        {
            "key": "results",
            "title": "Read the results",
            "done": judged > 0,
            "count": f"{judged} assignment(s) done",
            "url_name": "dashboard",
            "arg": first.pk if first else None,
        },
    ]
    nxt = next((s for s in steps if not s["done"]), None)
    # References without approved ACUs: the loop may be done once, but not the writing.
    return {"steps": steps, "next": nxt, "authors": n_authors, "unwritten": refs["total"] - refs["approved"]}
