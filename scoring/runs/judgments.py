"""Reading the judgments that count (submitted or approved assignments) out of the database."""

from collections import defaultdict

from hits.models import Assignment, Judgment


def counted_judgments(dataset, batch=None, include_excluded: bool = False):
    """Judgments of a dataset (or of one batch/round) whose assignments count: submitted or
    approved, confirmed by their provider, by workers the lead has not excluded (unless
    `include_excluded`, for the workers table)."""
    qs = Judgment.objects.filter(
        assignment__hit__batch__dataset=dataset,
        assignment__status__in=Assignment.COUNTED,
        assignment__confirmed=True,
    )
    if not include_excluded:
        qs = qs.filter(assignment__worker__excluded=False)
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
