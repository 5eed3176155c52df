"""Export a dataset as RoSE JSONL, with labels, ACU scores and normalized ACU scores, and where
each label came from: when a dataset's labels are more than the one round imported with it, each
summary's `annotator_labels` (the source data of Krippendorff's alpha) comes with `label_sources`,
per annotator the round, its kind (`imported` expert labels, an `expert` round, a `crowd` round),
the provider and worker id and the active seconds, so that an import gives the same dataset back
(hits.services.dataset_import).

The labels are read first (aligned and voted on as arrays); the
documents with their sentences, ACUs and summaries then follow in chunks of documents, so the
export starts at once and its memory does not grow with the documents.
"""

import json
import math
from collections import defaultdict

import numpy as np

from annotation.models import ACU, Dataset, Document, ReferenceSentence, Summary
from hits.models import Batch, Worker
from hits.selectors import counted_assignments
from scoring.results.exports.labels import ACU_ORDER, label_groups, label_matrix, label_texts, majorities
from scoring.stats.aggregation import normalized_acu_score

DOCUMENTS_PER_CHUNK = 500


def _annotator_key(worker: Worker, dataset: Dataset) -> str:
    """An expert's name in the dataset ("<dataset>/<name>" stored), a crowd worker's provider and id."""
    if worker.is_expert:
        return worker.external_id.removeprefix(f"{dataset.name}/")
    return f"{worker.provider}:{worker.external_id}"


def _source_kind(kind: str) -> str:
    """A round's kind as the export names it: `imported` expert labels, an `expert` round, `crowd`."""
    return "crowd" if kind in Batch.CROWD_KINDS else kind


def _sources(dataset, batch, keys: dict[int, str]) -> dict[tuple[int, int], str] | None:
    """{(summary id, worker id): the JSON of its label source}, or None when every label is of the
    one round imported with the dataset (the file's own labels: nothing to tell)."""
    # ACU labels only: a rating batch's work (hits/ratings) is its rating round's, exported apart.
    assignments = counted_assignments(dataset, batch).filter(hit__batch__protocol="").order_by("hit__batch_id", "pk")
    rounds = dict(Batch.objects.filter(pk__in=assignments.values("hit__batch_id")).values_list("pk", "name").order_by())
    kinds = dict(Batch.objects.filter(pk__in=rounds).values_list("pk", "kind"))
    if len(rounds) < 2 and set(kinds.values()) <= {Batch.Kind.IMPORTED}:
        return None
    workers = {
        pk: (provider, external_id)
        for pk, provider, external_id in Worker.objects.filter(pk__in=assignments.values("worker_id")).values_list(
            "pk", "provider", "external_id"
        )
    }
    out: dict[tuple[int, int], str] = {}
    for summary_id, worker_id, batch_id, seconds in assignments.values_list(
        "hit__summary_id", "worker_id", "hit__batch_id", "active_seconds"
    ):
        if (summary_id, worker_id) in out:  # a worker's labels of a summary come from their first round
            continue
        provider, external_id = workers[worker_id]
        source = {
            "round": rounds[batch_id],
            "kind": _source_kind(kinds[batch_id]),
            "provider": provider,
            "worker": keys.get(worker_id, external_id) if provider == Worker.Provider.EXPERT else external_id,
            "seconds": seconds,
        }
        out[(summary_id, worker_id)] = json.dumps(source, ensure_ascii=False)
    return out


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
    sorted by annotator, or None when no summary has several annotators and the labels need no
    sources; JSON of their label_sources or None)}."""
    keys: dict[int, str] = {}
    groups = label_groups(dataset, batch, worker_rank=_annotator_rank(dataset, keys))
    matrix = label_matrix(groups)
    summary_ids, majority, count, scores, starts = majorities(groups, matrix)
    majority_texts = label_texts(majority, count)
    sources = _sources(dataset, batch, keys) if len(summary_ids) else None
    if sources is None and not (len(summary_ids) and np.diff(starts).max() > 1):
        return {s: (majority_texts[i], scores[i], None, None) for i, s in enumerate(summary_ids)}
    texts = label_texts(matrix, groups.count)
    quoted = {pk: json.dumps(key, ensure_ascii=False) for pk, key in keys.items()}
    workers, summaries = groups.worker.tolist(), groups.summary.tolist()
    pairs = [f"{quoted[w]}: {t}" for w, t in zip(workers, texts, strict=True)]
    origins = [f"{quoted[w]}: {sources[(s, w)]}" for s, w in zip(summaries, workers, strict=True)] if sources else None
    bounds = starts.tolist()

    def joined(items, i):
        return "{" + ", ".join(items[bounds[i] : bounds[i + 1]]) + "}"

    return {
        s: (majority_texts[i], scores[i], joined(pairs, i), joined(origins, i) if origins else None)
        for i, s in enumerate(summary_ids)
    }


def _number(value: float) -> str:
    """A float as json.dumps writes it."""
    return repr(value) if math.isfinite(value) else json.dumps(value)


def _annotations(labelled, normalized) -> str:
    """The JSON of a record's "annotations" from the texts of `_labels`, as json.dumps writes it."""
    parts = []
    for (system, _, (majority, score, annotators, sources)), value in zip(labelled, normalized, strict=True):
        text = f'{system}: {{"acu_labels": {majority}, "acu": {_number(score)}, "normalized_acu": {_number(value)}'
        if annotators is not None:
            text += f', "annotator_labels": {annotators}'
        if sources is not None:
            text += f', "label_sources": {sources}'
        parts.append(text + "}")
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
    `normalized_acu`, `annotator_labels` when some summary has several annotators or the labels
    have sources, and `label_sources` when the labels are more than the round imported with them.
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
                np.array([score for _, _, (_, score, _, _) in labelled]),
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
