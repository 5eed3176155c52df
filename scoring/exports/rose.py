"""Export a dataset as RoSE JSONL, with labels, ACU scores and normalized ACU scores."""

import json

import numpy as np

from annotation.models import ACU, Dataset
from hits.models import Worker
from scoring.judgments import labels_by_summary
from scoring.stats.aggregation import majority_present, normalized_acu_score


def _annotator_key(worker: Worker, dataset: Dataset) -> str:
    if worker.provider == Worker.Provider.IMPORTED:
        prefix, _, rest = worker.external_id.partition("/")
        return rest or worker.external_id
    return f"{worker.provider}:{worker.external_id}"


def rose_records(dataset: Dataset, batch=None):
    """Yield one RoSE record (a dict) per document, in dataset order.

    Per system with judgments: `acu_labels` (majority, a tie is not present), `acu`,
    `normalized_acu`, and `annotator_labels` when some summary has several annotators.
    """
    labels = labels_by_summary(dataset, batch)
    several = any(len(workers) > 1 for workers in labels.values())
    worker_keys = {
        w.pk: _annotator_key(w, dataset)
        for w in Worker.objects.filter(pk__in={wid for per in labels.values() for wid in per})
    }
    acus_by_reference: dict[int, list[ACU]] = {}
    for acu in ACU.objects.filter(reference__document__dataset=dataset).order_by(
        "reference_id", "sentence__position", "position"
    ):
        acus_by_reference.setdefault(acu.reference_id, []).append(acu)

    documents = dataset.documents.select_related("reference").prefetch_related(
        "reference__sentences", "summaries__system"
    )
    for doc in documents.order_by("position"):
        reference = doc.reference
        acus = acus_by_reference.get(reference.pk, [])
        record = {
            "example_id": doc.external_id,
            "source": doc.source,
            "reference": "\n".join(s.text for s in reference.sentences.all()),
            "reference_acus": [a.text for a in acus],
            "system_outputs": {},
            "annotations": {},
        }
        for summary in sorted(doc.summaries.all(), key=lambda s: s.system.name):
            record["system_outputs"][summary.system.name] = summary.text
            per_worker = labels.get(summary.pk)
            if not per_worker:
                continue
            present = [sum(1 for w in per_worker.values() if w.get(a.pk) is True) for a in acus]
            total = [sum(1 for w in per_worker.values() if a.pk in w) for a in acus]
            majority = majority_present(present, total).astype(int).tolist()
            score = float(np.mean(majority)) if majority else 0.0
            annotation = {
                "acu_labels": majority,
                "acu": score,
                "normalized_acu": float(
                    normalized_acu_score(score, summary.word_count, reference.word_count, dataset.length_alpha)
                ),
            }
            if several:
                annotation["annotator_labels"] = {
                    worker_keys[wid]: [int(judged[a.pk]) if a.pk in judged else None for a in acus]
                    for wid, judged in sorted(per_worker.items(), key=lambda kv: worker_keys[kv[0]])
                }
            record["annotations"][summary.system.name] = annotation
        yield record


def rose_lines(dataset: Dataset, batch=None):
    """The RoSE JSONL lines of a dataset, one per document."""
    for record in rose_records(dataset, batch):
        yield json.dumps(record, ensure_ascii=False) + "\n"


def export_rose(dataset: Dataset, stream, batch=None) -> int:
    """Write RoSE JSONL to a text stream; returns the number of documents written."""
    count = 0
    for line in rose_lines(dataset, batch):
        stream.write(line)
        count += 1
    return count
