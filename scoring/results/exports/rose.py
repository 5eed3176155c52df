"""Export a dataset as RoSE JSONL, with labels, ACU scores and normalized ACU scores.

The labels are read first (aligned and voted on as arrays); the
documents with their sentences, ACUs and summaries then follow in chunks of documents, so the
export starts at once and its memory does not grow with the documents.
"""

import json
import math
from collections import defaultdict

import numpy as np

from annotation.models import ACU, Dataset, Document, ReferenceSentence, Summary
from hits.models import Worker
from scoring.results.exports.labels import ACU_ORDER, label_groups, label_matrix, label_texts, majorities
from scoring.stats.aggregation import normalized_acu_score

DOCUMENTS_PER_CHUNK = 500


def _annotator_key(worker: Worker, dataset: Dataset) -> str:
    if worker.provider == Worker.Provider.IMPORTED:
        prefix, _, rest = worker.external_id.partition("/")
        return rest or worker.external_id
    return f"{worker.provider}:{worker.external_id}"


def _annotator_rank(dataset, keys: dict):
    """A function from worker ids to their rank in annotator-key order; fills `keys`."""

    def rank(worker_ids: np.ndarray) -> np.ndarray:
        unique = np.unique(worker_ids)
        keys.update((w.pk, _annotator_key(w, dataset)) for w in Worker.objects.filter(pk__in=unique.tolist()))
        ordered = sorted(unique.tolist(), key=lambda pk: (keys[pk], pk))
        position = np.empty(len(unique), dtype=np.int64)
        position[np.searchsorted(unique, ordered)] = np.arange(len(unique))
        return position[np.searchsorted(unique, worker_ids)]

    return rank


def _labels(dataset, batch):
    """{summary_id: (JSON of its majority labels, ACU score, JSON of its annotator_labels
    sorted by annotator, or None when no summary has several annotators)}."""
    keys: dict[int, str] = {}
    groups = label_groups(dataset, batch, worker_rank=_annotator_rank(dataset, keys))
    matrix = label_matrix(groups)
    summary_ids, majority, count, scores, starts = majorities(groups, matrix)
    majority_texts = label_texts(majority, count)
    if not (len(summary_ids) and np.diff(starts).max() > 1):  # one annotator each: no annotator_labels
        return {s: (majority_texts[i], scores[i], None) for i, s in enumerate(summary_ids)}
    texts = label_texts(matrix, groups.count)
    quoted = {pk: json.dumps(key, ensure_ascii=False) for pk, key in keys.items()}
    pairs = [f"{quoted[w]}: {t}" for w, t in zip(groups.worker.tolist(), texts, strict=True)]
    bounds = starts.tolist()
    return {
        s: (majority_texts[i], scores[i], "{" + ", ".join(pairs[bounds[i] : bounds[i + 1]]) + "}")
        for i, s in enumerate(summary_ids)
    }


def _number(value: float) -> str:
    """A float as json.dumps writes it."""
    return repr(value) if math.isfinite(value) else json.dumps(value)


def _annotations(labelled, normalized) -> str:
    """The JSON of a record's "annotations" from the texts of `_labels`, as json.dumps writes it."""
    parts = []
    for (system, _, (majority, score, annotators)), value in zip(labelled, normalized, strict=True):
        text = f'{system}: {{"acu_labels": {majority}, "acu": {_number(score)}, "normalized_acu": {_number(value)}'
        parts.append(text + (f', "annotator_labels": {annotators}}}' if annotators is not None else "}"))
    return "{" + ", ".join(parts) + "}"


def _document_order(dataset) -> list[tuple[int, int | None]]:
    return list(dataset.documents.order_by("position", "pk").values_list("pk", "reference__pk"))


def _heads(dataset):
    """Per document in dataset order: its JSON line up to the value of "annotations", its
    reference's word count, and its summaries as (id, system, words) sorted by system."""
    order = _document_order(dataset)
    alpha = dataset.length_alpha  # carried on every line, so that an import gives the same scores
    for start in range(0, len(order), DOCUMENTS_PER_CHUNK):
        chunk = order[start : start + DOCUMENTS_PER_CHUNK]
        doc_ids, ref_ids = [d for d, _ in chunk], [r for _, r in chunk if r is not None]
        docs = {
            pk: rest
            for pk, *rest in Document.objects.filter(pk__in=doc_ids).values_list(
                "pk", "external_id", "source", "reference__word_count"
            )
        }
        sentences, acus, summaries = defaultdict(list), defaultdict(list), defaultdict(list)
        for ref, text in (
            ReferenceSentence.objects.filter(reference_id__in=ref_ids)
            .order_by("reference_id", "position")
            .values_list("reference_id", "text")
        ):
            sentences[ref].append(text)
        for ref, text in (
            ACU.objects.filter(reference_id__in=ref_ids)
            .order_by("reference_id", *ACU_ORDER)
            .values_list("reference_id", "text")
        ):
            acus[ref].append(text)
        for doc, *summary in Summary.objects.filter(document_id__in=doc_ids).values_list(
            "document_id", "system__name", "text", "word_count", "pk"
        ):
            summaries[doc].append(summary)
        for doc, ref in chunk:
            external_id, source, reference_words = docs[doc]
            ordered = sorted(summaries[doc])
            record = {
                "example_id": external_id,
                "source": source,
                "reference": "\n".join(sentences[ref]),
                "reference_acus": acus[ref],
                "system_outputs": {system: text for system, text, _, _ in ordered},
                "length_alpha": alpha,
                "annotations": {},
            }
            head = json.dumps(record, ensure_ascii=False)[: -len("{}}")]
            yield head, reference_words, [(pk, system, words) for system, _, words, pk in ordered]


def rose_lines(dataset: Dataset, batch=None):
    """The RoSE JSONL lines of a dataset, one per document in dataset order.

    Per system with judgments: `acu_labels` (majority, a tie is not present), `acu`,
    `normalized_acu`, and `annotator_labels` when some summary has several annotators.
    """
    labels = _labels(dataset, batch)
    heads = _heads(dataset)
    quoted: dict[str, str] = {}
    for head, reference_words, summaries in heads:
        labelled = [
            (quoted.get(system) or quoted.setdefault(system, json.dumps(system, ensure_ascii=False)), words, labels[pk])
            for pk, system, words in summaries
            if pk in labels
        ]
        normalized = (
            normalized_acu_score(
                np.array([score for _, _, (_, score, _) in labelled]),
                np.array([words for _, words, _ in labelled]),
                reference_words,
                dataset.length_alpha,
            ).tolist()
            if labelled
            else []
        )
        yield head + _annotations(labelled, normalized) + "}\n"


def export_rose(dataset: Dataset, stream, batch=None) -> int:
    """Write RoSE JSONL to a text stream; returns the number of documents written."""
    count = 0
    for line in rose_lines(dataset, batch):
        stream.write(line)
        count += 1
    return count
