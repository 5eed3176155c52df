"""Reads of the annotation side (selectors never write): references per authoring state.

On PostgreSQL the counts come from the tally rows its triggers keep (`annotation.tallies`), a
few rows per dataset whatever its size; other databases have no triggers, so there the
references are counted. That vendor branch is here only.
"""

from django.db.models import Count, Sum

from annotation import tallies
from annotation.models import Reference, ReferenceTally


def reference_states(dataset) -> dict[str, int]:
    """{status: references} of a dataset, every authoring state (0 where there is none), in the
    order of `Reference.Status`."""
    totals = dict.fromkeys(Reference.Status.values, 0)
    if tallies.available():
        counted = ReferenceTally.objects.filter(dataset=dataset).values_list("status").annotate(n=Sum("n"))
    else:
        counted = Reference.objects.filter(document__dataset=dataset).values_list("status").annotate(n=Count("pk"))
    for status, n in counted.order_by():
        if n:
            totals[status] = n
    return totals
