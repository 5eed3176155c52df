"""A plain-data picture of a dataset, to compare two datasets for equality."""

from collections import defaultdict

from annotation.models import ACU, Dataset
from hits.selectors import counted_judgments


def dataset_snapshot(dataset: Dataset) -> list:
    votes = defaultdict(lambda: defaultdict(dict))  # summary -> assignment -> acu -> present
    for summary_id, assignment_id, acu_id, present in counted_judgments(dataset).values_list(
        "assignment__hit__summary_id", "assignment_id", "acu_id", "present"
    ):
        votes[summary_id][assignment_id][acu_id] = present
    picture = []
    for doc in dataset.documents.order_by("position"):
        ref = doc.reference
        acus = list(ACU.objects.filter(reference=ref).order_by("sentence__position", "position"))
        summaries = {}
        for s in doc.summaries.select_related("system"):
            label_sets = sorted(
                (tuple(judged.get(a.pk) for a in acus) for judged in votes.get(s.pk, {}).values()), key=repr
            )
            summaries[s.system.name] = (s.text, s.word_count, label_sets)
        picture.append(
            (
                doc.external_id,
                doc.source,
                ref.word_count,
                ref.status,
                [s.text for s in ref.sentences.all()],
                [(a.sentence.position, a.position, a.text, a.status) for a in acus],
                summaries,
            )
        )
    return picture
