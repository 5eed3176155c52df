"""Automatic metric scores: import from JSONL (one object per document) or CSV (one row per
score), all or nothing, and the common lexical metrics (ROUGE) computed here.

JSONL: {"example_id": ID, METRIC: {SYSTEM: score, ...}, ...} (or the metrics under a "metrics" key).
CSV: a header `example_id,system,metric,score`, then one row per score.
"""

import csv
import io
import unicodedata
from pathlib import Path

from django.db import transaction

from annotation.importing import DatasetImportError
from annotation.models import Reference, Summary
from config import bounded_json
from config.json_body import MAX_DEPTH, MAX_INT_DIGITS
from scoring.models import MetricScore

CSV_COLUMNS = ("example_id", "system", "metric", "score")
# ROUGE-1/2/L recall and F1 against the reference summary (Google's rouge-score, Porter stemmer).
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def import_metric_scores(dataset, path) -> dict:
    """Scores from a file (.csv: CSV, anything else: JSONL). Replaces earlier scores of the same
    metrics; all or nothing."""
    path = Path(path)
    if not path.is_file():
        raise DatasetImportError("file is missing", str(path))
    return import_metric_bytes(dataset, path.read_bytes(), path.name)


def import_metric_bytes(dataset, data: bytes, name: str, progress=None) -> dict:
    """Scores from an uploaded or read file named `name` (.csv: CSV, else JSONL); `progress(line)`,
    when given, is told every PROGRESS_EVERY lines how far the reading is."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetImportError("the file is not UTF-8 text", name) from None
    entries = _csv_entries(text, name) if name.lower().endswith(".csv") else _jsonl_entries(text, name)
    return _store(dataset, entries if progress is None else _reporting(entries, progress), name)


PROGRESS_EVERY = 2000


def _reporting(entries, progress):
    """The entries unchanged, telling `progress` the line reached every PROGRESS_EVERY lines."""
    told = 0
    for entry in entries:
        if entry[0] - told >= PROGRESS_EVERY:
            told = entry[0]
            progress(told)
        yield entry


def _jsonl_entries(text: str, name: str):
    """(line, example_id, metric, system, value) of each score of a JSONL file."""
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:  # the one bounded reader: depth and integer size refused, never a RecursionError
            obj = bounded_json.loads(raw, max_depth=MAX_DEPTH, max_int_digits=MAX_INT_DIGITS)
        except bounded_json.TooDeep:
            raise DatasetImportError(f"the JSON is nested more than {MAX_DEPTH} levels deep", name, lineno) from None
        except bounded_json.NumberTooLong:
            message = f"the JSON has an integer of more than {MAX_INT_DIGITS} digits"
            raise DatasetImportError(message, name, lineno) from None
        except ValueError as exc:
            raise DatasetImportError(f"invalid JSON: {getattr(exc, 'msg', exc)}", name, lineno) from None
        if not isinstance(obj, dict) or "example_id" not in obj:
            raise DatasetImportError("each line needs an object with example_id", name, lineno)
        per_metric = (
            obj.get("metrics")
            if isinstance(obj.get("metrics"), dict)
            else {k: v for k, v in obj.items() if k != "example_id"}
        )
        for metric, by_system in per_metric.items():
            if not isinstance(by_system, dict):
                raise DatasetImportError(f"{metric!r} must map systems to scores", name, lineno)
            for system, value in by_system.items():
                yield lineno, obj["example_id"], metric, system, value


def _csv_entries(text: str, name: str):
    try:
        yield from _csv_rows(text, name)
    except csv.Error as exc:
        raise DatasetImportError(f"not a CSV file ({exc})", name) from None


def _csv_rows(text: str, name: str):
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    if tuple(header) != CSV_COLUMNS:
        raise DatasetImportError(f"the first line must be the header {','.join(CSV_COLUMNS)}", name, 1)
    for row in reader:
        lineno = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_COLUMNS):
            raise DatasetImportError(f"{len(row)} columns, {len(CSV_COLUMNS)} expected", name, lineno)
        example_id, system, metric, raw = (cell.strip() for cell in row)
        try:
            value = float(raw)
        except ValueError:
            raise DatasetImportError(f"score of {system!r} under {metric!r} is not a number", name, lineno) from None
        yield lineno, example_id, metric, system, value


def _has_control_characters(text: str) -> bool:
    """NUL and other control characters, and lone surrogates (no database stores them)."""
    return any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


def _store(dataset, entries, name: str) -> dict:
    documents = dict(dataset.documents.values_list("external_id", "pk"))
    systems = dict(dataset.systems.values_list("name", "pk"))
    rows, metrics, seen = [], set(), set()
    for lineno, example_id, metric, system, value in entries:
        document = documents.get(str(example_id).strip())  # ids are trimmed on import, as the dataset's were
        if document is None:
            raise DatasetImportError(f"unknown example_id {example_id!r}", name, lineno)
        if not str(metric).strip() or len(str(metric)) > 100:
            raise DatasetImportError("a metric name is 1 to 100 characters", name, lineno)
        if _has_control_characters(str(metric)):
            raise DatasetImportError(f"the metric name {metric!r} has a control character", name, lineno)
        if system not in systems:
            raise DatasetImportError(f"unknown system {system!r} under {metric!r}", name, lineno)
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or value != value
            or value
            in (
                float("inf"),
                float("-inf"),
            )
        ):
            raise DatasetImportError(f"score of {system!r} under {metric!r} is not a number", name, lineno)
        key = (document, systems[system], str(metric))
        if key in seen:
            raise DatasetImportError(f"a second score of {system!r} under {metric!r} for {example_id!r}", name, lineno)
        seen.add(key)
        rows.append(
            MetricScore(
                dataset=dataset, document_id=document, system_id=systems[system], metric=str(metric), value=float(value)
            )
        )
        metrics.add(str(metric))
    if not rows:
        raise DatasetImportError("no metric scores", name)
    with transaction.atomic():
        MetricScore.objects.filter(dataset=dataset, metric__in=metrics).delete()
        MetricScore.objects.bulk_create(rows, batch_size=5000)
    return {"metrics": sorted(metrics), "scores": len(rows)}


def compute_rouge(dataset) -> dict:
    """ROUGE-1, ROUGE-2 and ROUGE-L recall and F1 of every system summary against its document's
    reference summary, stored as metric scores (`rouge1_recall`, `rouge1_f1`, ...), replacing
    earlier ones. Documents without a reference text are skipped."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    references = {
        r.document_id: r.text for r in Reference.objects.filter(document__dataset=dataset).prefetch_related("sentences")
    }
    rows = []
    summaries = Summary.objects.filter(document__dataset=dataset).only("pk", "text", "document_id", "system_id")
    for summary in summaries.iterator(chunk_size=2000):
        reference = references.get(summary.document_id, "")
        if not reference.strip():
            continue
        scores = scorer.score(reference, summary.text)
        for kind in ROUGE_TYPES:
            for suffix, value in (("recall", scores[kind].recall), ("f1", scores[kind].fmeasure)):
                rows.append(
                    MetricScore(
                        dataset=dataset,
                        document_id=summary.document_id,
                        system_id=summary.system_id,
                        metric=f"{kind}_{suffix}",
                        value=float(value),
                    )
                )
    names = [f"{kind}_{suffix}" for kind in ROUGE_TYPES for suffix in ("recall", "f1")]
    if not rows:
        raise DatasetImportError(f"{dataset.name} has no reference summary text to compare the summaries with")
    with transaction.atomic():
        MetricScore.objects.filter(dataset=dataset, metric__in=names).delete()
        MetricScore.objects.bulk_create(rows, batch_size=5000)
    return {"metrics": names, "scores": len(rows), "summaries": len(rows) // len(names)}
