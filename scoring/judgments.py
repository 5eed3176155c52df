"""Reading the judgments that count (submitted or approved assignments) out of the database."""
from collections import defaultdict

from hits.models import Assignment, Judgment


def counted_judgments(dataset, batch=None):
    """Judgments of a dataset (or of one batch/round) whose assignments count: submitted or
    approved, by workers the lead has not excluded."""
    qs = Judgment.objects.filter(
        assignment__hit__batch__dataset=dataset,
        assignment__status__in=Assignment.COUNTED,
        assignment__worker__excluded=False,
        assignment__confirmed=True,
    )
    if batch is not None:
        qs = qs.filter(assignment__hit__batch=batch)
    return qs


def labels_by_summary(dataset, batch=None) -> dict[int, dict[int, dict[int, bool]]]:
    """{summary_id: {worker_id: {acu_id: present}}} for the judgments that count."""
    result: dict[int, dict[int, dict[int, bool]]] = defaultdict(lambda: defaultdict(dict))
    rows = counted_judgments(dataset, batch).values_list(
        "assignment__hit__summary_id", "assignment__worker_id", "acu_id", "present"
    )
    for summary_id, worker_id, acu_id, present in rows.iterator(chunk_size=20000):
        result[summary_id][worker_id][acu_id] = present
    return result
