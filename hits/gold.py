"""Gold items: known answers (the majority of imported expert labels per summary and ACU) and
the items of a qualification test as a worker sees them. Readers only."""

from collections import defaultdict

from annotation.models import Summary

from .models import Batch, QualificationTest
from .selectors import counted_judgments


def known_answers(dataset, summary_ids=None) -> dict[int, dict[int, bool]]:
    """{summary_id: {acu_id: present}} from the dataset's imported rounds; a summary counts
    only when every ACU of its reference has a label."""
    # Expert labels keep the judgments of workers the lead excluded from the crowd's scores.
    qs = counted_judgments(dataset, include_excluded=True).filter(assignment__hit__batch__kind=Batch.Kind.IMPORTED)
    if summary_ids is not None:
        qs = qs.filter(assignment__hit__summary_id__in=summary_ids)
    votes: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for summary_id, acu_id, present in qs.values_list("assignment__hit__summary_id", "acu_id", "present").iterator(
        chunk_size=20000
    ):
        tally = votes[summary_id][acu_id]
        tally[0] += int(present)
        tally[1] += 1
    # A tie is not present, as in scoring.
    return {sid: {aid: 2 * p > n for aid, (p, n) in acus.items()} for sid, acus in votes.items()}


def test_items(test: QualificationTest) -> list[dict]:
    """The items as the worker sees them: summary, reference and ACUs, without answers."""
    items = []
    for item in test.items.all():
        summary = Summary.objects.select_related("document__reference").get(pk=item.summary_id)
        reference = summary.document.reference
        acus = list(reference.acus.order_by("sentence__position", "position"))
        items.append({"item": item, "summary": summary, "reference": reference, "acus": acus})
    return items
