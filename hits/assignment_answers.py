"""What one worker answered in an assignment, next to the other workers' majority and the expert labels (reads only)."""

from collections import defaultdict

from annotation.models import ACU
from hits.gold import known_answers
from hits.models import Assignment
from hits.ratings.models import Rating
from hits.ratings.page import example_summaries
from hits.selectors import counted_judgments


def assignment_answers(assignment: Assignment) -> dict:
    """Per ACU of the HIT: the worker's answer, the current majority of the other counted workers
    (a tie is not present, as in scoring; None without other answers), and the expert label of an
    imported round or the HIT's gold answer where one exists."""
    hit = assignment.hit
    if hit.batch.protocol:
        return rating_answers(assignment)
    summary = hit.summary
    acus = list(ACU.objects.filter(reference=summary.document.reference).order_by("sentence__position", "position"))
    mine = dict(assignment.judgments.values_list("acu_id", "present"))
    others: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    counted = counted_judgments(hit=hit).exclude(assignment=assignment).values_list("acu_id", "present")
    for acu_id, present in counted:
        others[acu_id][0] += int(present)
        others[acu_id][1] += 1
    expert = known_answers(hit.batch.dataset, [summary.pk]).get(summary.pk, {})
    gold = {int(k): bool(v) for k, v in (hit.gold_answers or {}).items()}
    rows = []
    for acu in acus:
        p, n = others.get(acu.pk, (0, 0))
        majority = (2 * p > n) if n else None
        label = gold.get(acu.pk, expert.get(acu.pk))
        answer = mine.get(acu.pk)
        rows.append(
            {
                "acu": acu,
                "answer": answer,
                "majority": majority,
                "votes": f"{p}/{n}" if n else "",
                "expert": label,
                "agrees_majority": None if answer is None or majority is None else answer == majority,
                "agrees_expert": None if answer is None or label is None else answer == label,
            }
        )

    def share(key):
        decided = [r[key] for r in rows if r[key] is not None]
        return (sum(decided), len(decided)) if decided else None

    return {
        "rows": rows,
        "summary": summary,
        "with_majority": share("agrees_majority"),
        "with_expert": share("agrees_expert"),
        "answered": len(mine),
    }


def rating_answers(assignment: Assignment) -> dict:
    """A rating assignment (hits.ratings): per summary of the example, the worker's 1-5 score next
    to the mean of the other counted workers' scores (submitted or approved, confirmed, not excluded)."""
    hit = assignment.hit
    mine = dict(Rating.objects.filter(assignment=assignment).values_list("summary_id", "score"))
    others: dict[int, list[int]] = defaultdict(list)
    counted = Rating.objects.filter(
        assignment__hit=hit,
        assignment__status__in=Assignment.COUNTED,
        assignment__confirmed=True,
        assignment__worker__excluded=False,
    ).exclude(assignment=assignment)
    for summary_id, score in counted.values_list("summary_id", "score"):
        others[summary_id].append(score)
    rows = [
        {
            "summary": s,
            "score": mine.get(s.pk),
            "others": sum(others[s.pk]) / len(others[s.pk]) if others[s.pk] else None,
            "votes": len(others[s.pk]),
        }
        for s in example_summaries(hit.batch, hit.summary.document_id).select_related("system")
    ]
    return {"ratings": rows, "summary": hit.summary, "answered": len(mine), "rows": rows}
