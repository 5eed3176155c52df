"""Bounds every imported value is checked against before anything is written.

Field lengths (the database columns), NUL characters (PostgreSQL text cannot hold them) and
lone surrogates (not encodable as UTF-8) are refused with the file and line of the record;
JSON nesting and integer sizes are bounded by the RoSE reader (config.bounded_json).
"""

import math

from ..text import MAX_ACU_CHARS
from .errors import DatasetImportError
from .records import DocumentRecord

MAX_ID = 200  # Document.external_id
MAX_SYSTEM = 200  # System.name
MAX_ANNOTATOR = 99  # Worker.external_id is "<dataset name (<= 100)>/<annotator>", 200 at most
MAX_JSON_DEPTH = 16
MAX_INT_DIGITS = 30


def check_text(value: str, what: str, file: str | None = None, line: int | None = None) -> None:
    if "\x00" in value:
        raise DatasetImportError(f"{what} holds a NUL character (\\u0000), which cannot be stored", file, line)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DatasetImportError(
            f"{what} holds a lone surrogate ({value[exc.start]!r} at character {exc.start}), which is not valid text",
            file,
            line,
        ) from None


def _short(value: str, limit: int, what: str, file, line) -> None:
    if len(value) > limit:
        raise DatasetImportError(f"{what} is {len(value)} characters long; at most {limit} are allowed", file, line)


def check_records(records: list[DocumentRecord]) -> list[DocumentRecord]:
    for r in records:
        file, line = r.origin if r.origin != ("", 0) else (None, None)
        _short(r.external_id, MAX_ID, f"the document id {r.external_id[:40]!r}…", file, line)
        check_text(r.external_id, "the document id", file, line)
        check_text(r.source, "the source document", file, line)
        for i, sentence in enumerate(r.sentences):
            check_text(sentence, f"reference sentence {i + 1}", file, line)
        for i, unit in enumerate(r.units):
            _short(unit, MAX_ACU_CHARS, f"unit {i + 1} ({unit[:40]!r}…)", file, line)
            check_text(unit, f"unit {i + 1}", file, line)
        for system, text in r.summaries.items():
            _short(system, MAX_SYSTEM, f"the system name {system[:40]!r}…", file, line)
            check_text(system, "a system name", file, line)
            check_text(text, f"the summary of system {system[:40]!r}", file, line)
        for per_annotator in r.labels.values():
            for annotator in per_annotator:
                _short(annotator, MAX_ANNOTATOR, f"the annotator name {annotator[:40]!r}…", file, line)
                check_text(annotator, "an annotator name", file, line)
    return records


def check_alpha(value) -> float:
    """The normalization strength alpha as a positive finite number, or DatasetImportError."""
    try:
        alpha = float(value)
    except (TypeError, ValueError):
        raise DatasetImportError(f"the normalization alpha {value!r} is not a number") from None
    if not math.isfinite(alpha) or alpha <= 0:
        raise DatasetImportError(
            f"the normalization alpha must be a positive number (got {value!r}); "
            "RoSE uses 2 for CNN/DM, 5 for XSum, 0.5 for SamSum"
        )
    return alpha
