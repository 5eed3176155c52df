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
from django.utils import timezone

from annotation.importing import DatasetImportError
from annotation.importing.jsonlines import json_lines
from annotation.importing.textfile import decode
from annotation.models import Reference, Summary
from config.csv_cells import original_text
from config.json_body import MAX_DEPTH, MAX_INT_DIGITS
from scoring.models import MetricScore, MetricUpload

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
    text = decode(data, name, advice="save the sheet as “CSV UTF-8” (.csv)")
    entries = _csv_entries(text, name) if _is_csv(name, text) else _jsonl_entries(text, name)
    return _store(dataset, entries if progress is None else _reporting(entries, progress), name)


def _is_csv(name: str, text: str) -> bool:
    """.csv and .tsv files are CSV, .jsonl, .ndjson and .json files JSONL; a file of another name
    (scores.txt) is JSONL when it begins with an object, else CSV."""
    suffix = Path(name).suffix.lower()
    if suffix in (".csv", ".tsv"):
        return True
    if suffix in (".jsonl", ".ndjson", ".json"):
        return False
    return not text.lstrip().startswith("{")


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
    # The one bounded reader: depth and integer size refused, never a RecursionError.
    for lineno, obj in json_lines(
        text, name, kind="metric scores JSONL", max_depth=MAX_DEPTH, max_int_digits=MAX_INT_DIGITS
    ):
        for metric, by_system in _per_metric(obj, name, lineno).items():
            if not isinstance(by_system, dict):
                raise DatasetImportError(f"{metric!r} must map systems to scores", name, lineno)
            for system, value in by_system.items():
                yield lineno, obj["example_id"], metric, system, value


def _per_metric(obj, name: str, lineno: int) -> dict:
    """A JSONL line's {metric: {system: score}}; a line of a RoSE dataset file is named as such."""
    if not isinstance(obj, dict) or "example_id" not in obj:
        raise DatasetImportError("each line needs an object with example_id", name, lineno)
    if "system_outputs" in obj or "reference_acus" in obj:
        raise DatasetImportError(
            "this is a line of a RoSE dataset file (it has system_outputs or reference_acus), not metric scores;"
            " a dataset is imported on the Import page",
            name,
            lineno,
        )
    if isinstance(obj.get("metrics"), dict):
        return obj["metrics"]
    return {k: v for k, v in obj.items() if k != "example_id"}


def _csv_entries(text: str, name: str):
    try:
        yield from _csv_rows(text, name)
    except csv.Error as exc:
        raise DatasetImportError(f"not a CSV file ({exc})", name) from None


# Excel saves "CSV" with the separator of the computer's region: a semicolon where the decimal
# mark is a comma (most of continental Europe), a tab as "Unicode text"; each is read.
SEPARATORS = (",", ";", "\t")


def _cells(row: list[str]) -> list[str]:
    """The row's cells trimmed, without the empty ones a spreadsheet leaves after the last column."""
    cells = [cell.strip() for cell in row]
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _separator(first_line: str, name: str) -> str:
    for separator in SEPARATORS:
        header = next(csv.reader([first_line], delimiter=separator), [])
        if tuple(cell.lower() for cell in _cells(header)) == CSV_COLUMNS:
            return separator
    raise DatasetImportError(
        f"the first line must be the header {','.join(CSV_COLUMNS)} (separated by commas, semicolons or tabs),"
        f" not {first_line[:80]!r}",
        name,
        1,
    )


def _score(raw: str, separator: str) -> float:
    """The cell as a number; with semicolons between cells, a decimal comma (0,25) is a decimal mark."""
    if separator == ";" and raw.count(",") == 1 and "." not in raw:
        raw = raw.replace(",", ".")
    return float(raw)


def _csv_rows(text: str, name: str):
    separator = _separator(text.split("\n", 1)[0].rstrip("\r"), name)
    reader = csv.reader(io.StringIO(text), delimiter=separator)
    next(reader, None)
    for row in reader:
        lineno = reader.line_num
        cells = _cells(row)
        if not cells:
            continue
        if len(cells) != len(CSV_COLUMNS):
            raise DatasetImportError(f"{len(cells)} columns, {len(CSV_COLUMNS)} expected", name, lineno)
        example_id, system, metric, raw = cells
        try:
            value = _score(raw, separator)
        except ValueError:
            raise DatasetImportError(f"score of {system!r} under {metric!r} is not a number", name, lineno) from None
        yield lineno, example_id, metric, system, value


def _has_control_characters(text: str) -> bool:
    """NUL and other control characters, and lone surrogates (no database stores them)."""
    return any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


def _known_name(known: dict, cell):
    """The cell as the dataset names it: a cell our CSV exports protected from spreadsheets
    ('-123 for the id -123, see config.csv_cells) is read as the name it stands for."""
    if not isinstance(cell, str) or cell in known:
        return cell
    return original_text(cell)


def _known(known: dict, cell):
    return known.get(_known_name(known, cell))


def _store(dataset, entries, name: str) -> dict:
    documents = dict(dataset.documents.values_list("external_id", "pk"))
    systems = dict(dataset.systems.values_list("name", "pk"))
    rows, metrics, seen = [], set(), set()
    for lineno, example_id, metric, system, value in entries:
        document = _known(documents, str(example_id).strip())  # ids are trimmed on import, as the dataset's were
        if document is None:
            raise DatasetImportError(f"unknown example_id {example_id!r}", name, lineno)
        if not str(metric).strip() or len(str(metric)) > 100:
            raise DatasetImportError("a metric name is 1 to 100 characters", name, lineno)
        if _has_control_characters(str(metric)):
            raise DatasetImportError(f"the metric name {metric!r} has a control character", name, lineno)
        system = _known_name(systems, system)
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
    _replace(dataset, metrics, rows)
    return {"metrics": sorted(metrics), "scores": len(rows)}


def _replace(dataset, metrics, rows: list[MetricScore]) -> None:
    """Store these scores in place of the dataset's earlier ones of the same metrics; a refused
    upload's error is then old news (the Metrics page stops showing it as the state of things)."""
    with transaction.atomic():
        MetricScore.objects.filter(dataset=dataset, metric__in=metrics).delete()
        MetricScore.objects.bulk_create(rows, batch_size=5000)
        MetricUpload.objects.filter(
            dataset=dataset, status=MetricUpload.Status.FAILED, superseded_at__isnull=True
        ).update(superseded_at=timezone.now())


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
    _replace(dataset, names, rows)
    return {"metrics": names, "scores": len(rows), "summaries": len(rows) // len(names)}
