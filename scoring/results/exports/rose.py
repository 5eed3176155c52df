"""Export a dataset as RoSE JSONL, with labels, ACU scores and normalized ACU scores, and where
each label came from: when a dataset's labels are more than the one round imported with it, each
summary's `annotator_labels` (the source data of Krippendorff's alpha) comes with `label_sources`,
per annotator the round, its kind (`imported` expert labels, an `expert` round, a `crowd` round),
the provider and worker id, the active seconds, the gold record and the worker's state (blocked,
excluded); and `uncounted_labels`, the work that counts nowhere (rejected, with the lead's feedback,
or an excluded worker's), so that an import gives the same dataset back, its workers table
included (hits.services.dataset_import).

The labels are read first (aligned and voted on as arrays); the
documents with their sentences, ACUs and summaries then follow in chunks of documents, so the
export starts at once and its memory does not grow with the documents.
"""

import json
import math
from collections import defaultdict

import numpy as np
from django.db.models import Count, Q

from annotation.models import ACU, Dataset, Document, Reference, ReferenceSentence, Summary
from hits.models import Assignment, Batch, Judgment, Worker
from hits.selectors import counted_assignments
from scoring.results.exports.labels import (
    ACU_ORDER,
    acu_places,
    annotator_key,
    integer_rows,
    label_groups,
    label_matrix,
    label_texts,
    majorities,
)
from scoring.runs.data import load_judgments
from scoring.runs.pairs import posterior_labelled
from scoring.runs.services import scored_judgments
from scoring.stats.aggregation import normalized_acu_score

DOCUMENTS_PER_CHUNK = 500


def _source_kind(kind: str) -> str:
    """A round's kind as the export names it: `imported` expert labels, an `expert` round, `crowd`."""
    return "crowd" if kind in Batch.CROWD_KINDS else kind


def _source(worker: Worker, dataset: Dataset, round_: str, kind: str, seconds, gold: tuple) -> dict:
    """A label source as the export writes it: the round, its kind, the worker, the active seconds,
    the gold record (when the work had gold) and a crowd worker's state (blocked, excluded)."""
    source = {
        "round": round_,
        "kind": _source_kind(kind),
        "provider": worker.provider,
        "worker": annotator_key(worker, dataset) if worker.is_expert else worker.external_id,
        "seconds": seconds,
    }
    if gold[1]:
        source["gold"] = {"correct": gold[0] or 0, "total": gold[1]}
    if worker.blocked:
        source.update(blocked=True, block_reason=worker.block_reason)
    if worker.excluded:
        source["excluded"] = True
    return source


def _rounds(assignments) -> dict[int, tuple[str, str]]:
    """{batch id: (name, kind)} of the rounds of some assignments."""
    rows = Batch.objects.filter(pk__in=assignments.values("hit__batch_id")).values_list("pk", "name", "kind")
    return {pk: (name, kind) for pk, name, kind in rows.order_by()}


SOURCE_COLUMNS = ("hit__summary_id", "worker_id", "hit__batch_id", "active_seconds", "gold_correct", "gold_total")


def _sources(dataset, batch) -> dict[tuple[int, int], str] | None:
    """{(summary id, worker id): the JSON of its label source}, or None when every label is of the
    one round imported with the dataset (the file's own labels: nothing to tell)."""
    # ACU labels only: a rating batch's work (hits/ratings) is its rating round's, exported apart.
    assignments = counted_assignments(dataset, batch).filter(hit__batch__protocol="").order_by("pk")
    rounds = _rounds(assignments)
    if len(rounds) < 2 and {kind for _, kind in rounds.values()} <= {Batch.Kind.IMPORTED}:
        return None
    workers = Worker.objects.in_bulk(list(assignments.values_list("worker_id", flat=True).distinct().order_by()))
    out: dict[tuple[int, int], str] = {}
    for summary_id, worker_id, batch_id, seconds, *gold in assignments.values_list(*SOURCE_COLUMNS):
        # a worker who judged a summary in several rounds: their labels are their latest (as the scores
        # read them, hits.latest_labels.latest_per_worker), from their latest assignment's round
        source = _source(workers[worker_id], dataset, *rounds[batch_id], seconds, tuple(gold))
        out[(summary_id, worker_id)] = json.dumps(source, ensure_ascii=False)
    return out


def uncounted_assignments(dataset, batch=None):
    """The ACU work that counts nowhere but that the workers table shows: rejected work, and the
    work of excluded workers."""
    scope = Assignment.objects.filter(hit__batch__dataset=dataset, hit__batch__protocol="", confirmed=True)
    scope = scope.filter(hit__batch=batch) if batch is not None else scope
    return scope.filter(
        Q(status=Assignment.Status.REJECTED) | Q(status__in=Assignment.COUNTED, worker__excluded=True)
    ).order_by("hit__summary_id", "hit__batch_id", "worker_id", "pk")


def _uncounted_labels(dataset, assignments, rows) -> dict[int, list]:
    """{assignment id: its labels in the reference's ACU order, null where it judged none}."""
    sizes = dict(
        Summary.objects.filter(pk__in={row[1] for row in rows})
        .annotate(n=Count("document__reference__acus"))
        .values_list("pk", "n")
    )
    labels: dict[int, list] = {row[0]: [None] * sizes[row[1]] for row in rows}
    judged = integer_rows(
        Judgment.objects.filter(assignment__in=assignments)
        .values_list("assignment_id", "acu_id", "present")
        .order_by(),
        3,
    )
    index = acu_places(dataset).of(judged[:, 1])[0].tolist()
    for assignment, at, present in zip(judged[:, 0].tolist(), index, judged[:, 2].tolist(), strict=True):
        labels[assignment][at] = present
    return labels


def _uncounted(dataset, batch) -> dict[int, str]:
    """{summary id: the JSON of its `uncounted_labels`}: each uncounted assignment's labels, its
    review state ("rejected", or "approved" work of an excluded worker), the rejection's feedback
    and its source."""
    assignments = uncounted_assignments(dataset, batch)
    rows = list(assignments.values_list("pk", *SOURCE_COLUMNS, "status", "feedback"))
    if not rows:
        return {}
    rounds = _rounds(assignments)
    workers = Worker.objects.in_bulk(list({row[2] for row in rows}))
    labels = _uncounted_labels(dataset, assignments, rows)
    out: dict[int, list[str]] = defaultdict(list)
    for pk, summary, worker_id, batch_id, seconds, g_ok, g_total, status, feedback in rows:
        source = _source(workers[worker_id], dataset, *rounds[batch_id], seconds, (g_ok, g_total))
        state = "rejected" if status == Assignment.Status.REJECTED else "approved"
        item = {"labels": labels[pk], "status": state, "feedback": feedback, **source}
        out[summary].append(json.dumps(item, ensure_ascii=False))
    return {summary: "[" + ", ".join(items) + "]" for summary, items in out.items()}


def _annotator_rank(dataset, keys: dict):
    """A function from worker ids to their rank in annotator-key order; fills `keys`."""

    def rank(worker_ids: np.ndarray) -> np.ndarray:
        unique = np.unique(worker_ids)
        keys.update((w.pk, annotator_key(w, dataset)) for w in Worker.objects.filter(pk__in=unique.tolist()))
        ordered = sorted(unique.tolist(), key=lambda pk: (keys[pk], pk))
        position = np.empty(len(unique), dtype=np.int64)
        position[np.searchsorted(unique, ordered)] = np.arange(len(unique))
        return position[np.searchsorted(unique, worker_ids)]

    return rank


def _round_labels(dataset, batch, summary_ids: list[int], count: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """The labels and ACU scores of the round's scores (scoring.runs.services.scored_judgments: an
    adaptive or `pairs` round's posteriors, a triage round's machine labels where it decided) for these
    summaries, one row each in ACU order as `majorities` gives them; the annotators' own labels
    are exported beside them unchanged."""
    scored = scored_judgments(batch, load_judgments(dataset, batch))
    keep = np.isin(scored.summary, summary_ids)
    row = np.searchsorted(np.array(summary_ids), scored.summary[keep])  # label_groups orders summaries by id
    index, _, _ = acu_places(dataset).of(scored.acu[keep])
    width = int(count.max()) if len(count) else 0
    present = np.zeros((len(summary_ids), width), dtype=np.int32)
    total = np.zeros((len(summary_ids), width), dtype=np.int32)
    np.add.at(present, (row, index), scored.present[keep].astype(np.int32))
    np.add.at(total, (row, index), 1)
    labels = (2 * present > total).astype(np.int8)  # one vote per pair here; a tie is not present
    return labels, (labels.sum(axis=1) / np.maximum(count, 1)).tolist()


def _labels(dataset, batch):
    """{summary_id: (JSON of its majority labels, ACU score, JSON of its annotator_labels
    sorted by annotator, or None when no summary has several annotators and the labels need no
    sources; JSON of their label_sources or None)}."""
    keys: dict[int, str] = {}
    groups = label_groups(dataset, batch, worker_rank=_annotator_rank(dataset, keys))
    matrix = label_matrix(groups)
    summary_ids, majority, count, scores, starts = majorities(groups, matrix)
    if posterior_labelled(batch) or (batch is not None and batch.machine_decides):
        majority, scores = _round_labels(dataset, batch, summary_ids, count)
    majority_texts = label_texts(majority, count)
    sources = _sources(dataset, batch) if len(summary_ids) else None
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


def _annotations(labelled, normalized, uncounted: dict[int, str]) -> str:
    """The JSON of a record's "annotations" from the texts of `_labels` (per labelled summary) and
    of `_uncounted` (per summary id), as json.dumps writes it."""
    parts = []
    at = 0
    for pk, system, found in labelled:
        fields = []
        if found is not None:
            majority, score, annotators, sources = found
            value = normalized[at]
            at += 1
            fields.append(f'"acu_labels": {majority}, "acu": {_number(score)}, "normalized_acu": {_number(value)}')
            if annotators is not None:
                fields.append(f'"annotator_labels": {annotators}')
            if sources is not None:
                fields.append(f'"label_sources": {sources}')
        if pk in uncounted:
            fields.append(f'"uncounted_labels": {uncounted[pk]}')
        parts.append(f"{system}: {{{', '.join(fields)}}}")
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
                "pk", "external_id", "source", "reference__word_count", "reference__status"
            )
        }
        sentences, acus, acu_sentences, summaries = (
            defaultdict(list),
            defaultdict(list),
            defaultdict(list),
            defaultdict(list),
        )
        for ref, text in (
            ReferenceSentence.objects.filter(reference_id__in=ref_ids)
            .order_by("reference_id", "position")
            .values_list("reference_id", "text")
        ):
            sentences[ref].append(text)
        for ref, text, sentence in (
            ACU.objects.filter(reference_id__in=ref_ids)
            .order_by("reference_id", *ACU_ORDER)
            .values_list("reference_id", "text", "sentence__position")
        ):
            acus[ref].append(text)
            acu_sentences[ref].append(sentence)
        for doc, *summary in Summary.objects.filter(document_id__in=doc_ids).values_list(
            "document_id", "system__name", "text", "word_count", "pk"
        ):
            summaries[doc].append(summary)
        for doc, ref in chunk:
            external_id, source, reference_words, status = docs[doc]
            ordered = sorted(summaries[doc])
            record = {
                "example_id": external_id,
                "source": source,
                "reference": "\n".join(sentences[ref]),
                "reference_acus": acus[ref],
                "reference_acu_sentences": acu_sentences[ref],  # the sentence each was written under
                "reference_approved": status == Reference.Status.APPROVED,  # else still being written
                "system_outputs": {system: text for system, text, _, _ in ordered},
                "length_alpha": alpha,
                "annotations": {},
            }
            head = json.dumps(record, ensure_ascii=False)[: -len("{}}")]
            yield head, reference_words, [(pk, system, words) for system, _, words, pk in ordered]


def rose_lines(dataset: Dataset, batch=None):
    """The RoSE JSONL lines of a dataset, one per document in dataset order.

    Per system with judgments: `acu_labels` (majority, a tie is not present; a round's export
    of a `pairs` or triage round: the labels its scores read, `_round_labels`), `acu`,
    `normalized_acu`, `annotator_labels` when some summary has several annotators or the labels
    have sources, `label_sources` when the labels are more than the round imported with them, and
    `uncounted_labels` for the work that counts nowhere (rejected, or of an excluded worker).
    """
    labels = _labels(dataset, batch)
    uncounted = _uncounted(dataset, batch)
    heads = _heads(dataset)
    quoted: dict[str, str] = {}
    for head, reference_words, summaries in heads:
        shown = [
            (pk, quoted.get(system) or quoted.setdefault(system, json.dumps(system, ensure_ascii=False)), words)
            for pk, system, words in summaries
            if pk in labels or pk in uncounted
        ]
        scored = [(labels[pk][1], words) for pk, _, words in shown if pk in labels]
        normalized = (
            normalized_acu_score(
                np.array([score for score, _ in scored]),
                np.array([words for _, words in scored]),
                reference_words,
                dataset.length_alpha,
            ).tolist()
            if scored
            else []
        )
        labelled = [(pk, system, labels.get(pk)) for pk, system, _ in shown]
        yield head + _annotations(labelled, normalized, uncounted) + "}\n"


def export_rose(dataset: Dataset, stream, batch=None) -> int:
    """Write RoSE JSONL to a text stream; returns the number of documents written."""
    count = 0
    for line in rose_lines(dataset, batch):
        stream.write(line)
        count += 1
    return count
