"""Gold items: known answers (the majority of the expert labels per summary and ACU, each expert
one vote: their latest label, `hits.latest_labels`) and the items of a qualification test as a
worker sees them. Readers only.

Expert labels are the judgments of the expert rounds (`Batch.EXPERT_KINDS`): labels imported
with a dataset, and labels authors and leads made on the task page in an expert round
(hits.services.expert). Both are stored alike (an approved assignment per expert and summary),
so every reader of the gold (qualification tests, gold HITs and the worker quality they feed,
the assignment review, the judges' expert target) takes them from `expert_judgments`."""

from collections import defaultdict

import numpy as np
from django.db.models import Count, F, Q

from annotation.models import Summary

from .latest_labels import latest_per_worker
from .models import HIT, Assignment, Batch, ExpertDecision, QualificationTest
from .selectors import counted_judgments

# A dataset has enough gold for a qualification test of the default size (hits.forms) with as
# many left for gold HITs; below this the dataset page offers to label more in the browser.
GOLD_WANTED = 10


def expert_judgments(dataset):
    """The counted judgments of the dataset's expert rounds (imported or made here)."""
    # Expert labels keep the judgments of workers the lead excluded from the crowd's scores.
    return counted_judgments(dataset, include_excluded=True).filter(assignment__hit__batch__kind__in=Batch.EXPERT_KINDS)


def gold_summary_count(dataset) -> int:
    """How many summaries of the dataset are gold (`known_answers`): those with expert labels, less
    those of expert rounds made here still waiting for an expert or for a decision (one query for
    imported labels; the summaries labelled here are read in full)."""
    labelled = expert_judgments(dataset).order_by().values("assignment__hit__summary_id").distinct().count()
    made_here = set(
        expert_judgments(dataset)
        .filter(assignment__hit__batch__kind=Batch.Kind.EXPERT)
        .order_by()
        .values_list("assignment__hit__summary_id", flat=True)
        .distinct()
    )
    if not made_here:
        return labelled
    return labelled - len(made_here - set(known_answers(dataset, made_here)))


def gold_summary_ids(dataset) -> set[int]:
    """The summaries of the dataset with expert labels: the gold qualification tests and gold
    HITs are drawn from, whose labels and votes only leads see."""
    return set(expert_judgments(dataset).order_by().values_list("assignment__hit__summary_id", flat=True).distinct())


def _votes(dataset, summary_ids=None):
    """{summary: {acu: [present votes, votes]}} of the expert labels, one vote per expert: an expert
    who labelled a summary in several expert rounds (two imported rounds, an imported round and one
    made here) votes with their latest label (`latest_per_worker`, the rule the scores apply); and
    the summaries labelled in an expert round made here (whose gold waits for their experts to agree)."""
    qs = expert_judgments(dataset)
    if summary_ids is not None:
        qs = qs.filter(assignment__hit__summary_id__in=summary_ids)
    rows = list(
        qs.order_by().values_list(
            "assignment__hit__summary_id",
            "acu_id",
            "assignment__worker_id",
            "pk",
            "present",
            "assignment__hit__batch__kind",
        )
    )
    made_here = {row[0] for row in rows if row[5] == Batch.Kind.EXPERT}
    votes: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    if not rows:
        return votes, made_here
    table = np.array([row[:5] for row in rows], dtype=np.int64)
    table = table[latest_per_worker(table[:, 0], table[:, 1], table[:, 2], table[:, 3])]
    for summary_id, acu_id, present in table[:, [0, 1, 4]].tolist():
        tally = votes[summary_id][acu_id]
        tally[0] += present
        tally[1] += 1
    return votes, made_here


def _waiting(dataset, made_here: set[int]) -> set[int]:
    """Summaries of expert rounds made here whose places are not all labelled yet (an open round)."""
    open_hits = HIT.objects.filter(
        batch__dataset=dataset,
        batch__kind=Batch.Kind.EXPERT,
        batch__status=Batch.Status.PUBLISHED,
        summary_id__in=made_here,
    ).annotate(labelled=Count("assignments", filter=Q(assignments__status__in=Assignment.COUNTED), distinct=True))
    return set(open_hits.filter(labelled__lt=F("max_assignments")).values_list("summary_id", flat=True))


def disagreements(dataset, summary_ids=None) -> dict[int, dict[int, tuple[int, int]]]:
    """{summary: {acu: (present votes, votes)}} of the ACUs whose experts disagreed in an expert
    round made here and that no lead has decided yet: their summaries are no gold until then."""
    votes, made_here = _votes(dataset, summary_ids)
    # A summary some expert has yet to label is not reviewed: the decision comes after every vote
    # (and whoever decides cannot label it afterwards).
    made_here -= _waiting(dataset, made_here) if made_here else set()
    decided = set(ExpertDecision.objects.filter(summary_id__in=made_here).values_list("summary_id", "acu_id"))
    out: dict[int, dict[int, tuple[int, int]]] = {}
    for sid in made_here:
        split = {aid: (p, n) for aid, (p, n) in votes[sid].items() if 0 < p < n and (sid, aid) not in decided}
        if split:
            out[sid] = split
    return out


def known_answers(dataset, summary_ids=None) -> dict[int, dict[int, bool]]:
    """{summary_id: {acu_id: present}} from the dataset's expert labels (`expert_judgments`), each
    expert one vote, their latest label of the pair (`_votes`): imported labels by their majority (a tie is not present, as in scoring); labels made here
    once every expert of the summary has labelled it (or its round is closed) and, where they
    disagree, as a lead decided (`ExpertDecision`): until then the summary is no gold."""
    votes, made_here = _votes(dataset, summary_ids)
    decisions = {
        (sid, aid): present
        for sid, aid, present in ExpertDecision.objects.filter(summary_id__in=made_here).values_list(
            "summary_id", "acu_id", "present"
        )
    }
    waiting = _waiting(dataset, made_here) if made_here else set()
    answers = {}
    for sid, acus in votes.items():
        if sid in waiting:
            continue
        if sid in made_here:
            if any(0 < p < n and (sid, aid) not in decisions for aid, (p, n) in acus.items()):
                continue  # the experts disagree and no lead has decided yet
            answers[sid] = {aid: decisions.get((sid, aid), 2 * p > n) for aid, (p, n) in acus.items()}
        else:
            answers[sid] = {aid: 2 * p > n for aid, (p, n) in acus.items()}
    return answers


def answer_key(item_id: int, acu_id) -> str:
    """A test's answers are keyed by item and ACU: two items may show the same reference's ACUs."""
    return f"{item_id}:{acu_id}"


def test_items(test: QualificationTest, given: dict[str, bool] | None = None, sheet=None) -> list[dict]:
    """The items of a `sheet` (its gold items: hits.sheets; the whole pool when None) as the
    worker sees them: summary, reference (its sentences, as on the task page) and ACUs, without
    answers; `rows` pairs each ACU with its answer key and the answer `given` on a refused sheet
    (kept, so the page shows it again)."""
    given = given or {}
    items = []
    for item in test.items.all() if sheet is None else sheet:
        summary = Summary.objects.select_related("document__reference").get(pk=item.summary_id)
        reference = summary.document.reference
        acus = list(reference.acus.order_by("sentence__position", "position"))
        rows = [
            {"acu": acu, "key": answer_key(item.pk, acu.pk), "given": given.get(answer_key(item.pk, acu.pk))}
            for acu in acus
        ]
        sentences = list(reference.sentences.order_by("position").values_list("text", flat=True))
        items.append(
            {
                "item": item,
                "summary": summary,
                "reference": reference,
                "acus": acus,
                "rows": rows,
                "sentences": sentences,
            }
        )
    return items
