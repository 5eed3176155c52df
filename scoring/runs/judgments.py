"""The judgments that count (`hits.selectors.counted_judgments`) as the pages read them: labels per summary."""

from collections import defaultdict

from hits.selectors import counted_judgments


def labels_by_summary(dataset, batch=None) -> dict[int, dict[int, dict[int, bool]]]:
    """{summary_id: {worker_id: {acu_id: present}}} for the judgments that count."""
    result: dict[int, dict[int, dict[int, bool]]] = defaultdict(lambda: defaultdict(dict))
    rows = counted_judgments(dataset, batch).values_list(
        "assignment__hit__summary_id", "assignment__worker_id", "acu_id", "present"
    )
    for summary_id, worker_id, acu_id, present in rows.iterator(chunk_size=20000):
        result[summary_id][worker_id][acu_id] = present
    return result
