"""Gold items: known answers (the majority of the expert labels per summary and ACU) and
the items of a qualification test as a worker sees them. Readers only.

Expert labels are the judgments of the expert rounds (`Batch.EXPERT_KINDS`): labels imported
with a dataset, and labels authors and leads made on the task page in an expert round
(hits.services.expert). Both are stored alike (an approved assignment per expert and summary),
so every reader of the gold (qualification tests, gold HITs and the worker quality they feed,
the assignment review, the judges' expert target) takes them from `expert_judgments`."""

from collections import defaultdict

from annotation.models import Summary

from .models import Batch, QualificationTest
from .selectors import counted_judgments

# A dataset has enough gold for a qualification test of the default size (hits.forms) with as
# many left for gold HITs; below this the dataset page offers to label more in the browser.
GOLD_WANTED = 10


def expert_judgments(dataset):
    """The counted judgments of the dataset's expert rounds (imported or made here)."""
    # Expert labels keep the judgments of workers the lead excluded from the crowd's scores.
    return counted_judgments(dataset, include_excluded=True).filter(assignment__hit__batch__kind__in=Batch.EXPERT_KINDS)


def gold_summary_count(dataset) -> int:
    """How many summaries of the dataset have expert labels (known answers): one query."""
    return expert_judgments(dataset).order_by().values("assignment__hit__summary_id").distinct().count()


def gold_summary_ids(dataset) -> set[int]:
    """The summaries of the dataset with expert labels: the gold qualification tests and gold
    HITs are drawn from, whose labels and votes only leads see."""
    return set(expert_judgments(dataset).order_by().values_list("assignment__hit__summary_id", flat=True).distinct())


def known_answers(dataset, summary_ids=None) -> dict[int, dict[int, bool]]:
    """{summary_id: {acu_id: present}} from the dataset's expert labels (`expert_judgments`)."""
    qs = expert_judgments(dataset)
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


def answer_key(item_id: int, acu_id) -> str:
    """A test's answers are keyed by item and ACU: two items may show the same reference's ACUs."""
    return f"{item_id}:{acu_id}"


def test_items(test: QualificationTest, given: dict[str, bool] | None = None) -> list[dict]:
    """The items as the worker sees them: summary, reference (its sentences, as on the task
    page) and ACUs, without answers; `rows` pairs each ACU with its answer key and the answer
    `given` on a refused sheet (kept, so the page shows it again)."""
    given = given or {}
    items = []
    for item in test.items.all():
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
