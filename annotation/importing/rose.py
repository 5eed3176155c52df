"""Reader for RoSE JSONL: one JSON object per document.

Keys: `example_id`, `source`, `reference` (one sentence per line in RoSE's CNN/DM records,
else a paragraph split by a sentence splitter), `reference_acus` (list of strings),
`system_outputs` ({system: text}), optional `annotations`
({system: {"acu_labels": [0/1, ...], optional "acu", "normalized_acu"}}), optional `count_id`.

Extension (written by our export when a summary has several annotators, read back on
import): `annotations[system]["annotator_labels"] = {annotator: [0/1/null, ...]}`, the
labels of each worker; `acu_labels` then holds their majority.
"""

import json
from pathlib import Path

from config import bounded_json

from ..text import split_sentences
from .errors import DatasetImportError
from .limits import MAX_INT_DIGITS, MAX_JSON_DEPTH, check_alpha
from .records import SINGLE_ANNOTATOR, DocumentRecord
from .textfile import decode

_PLAIN = ({int}, {0, 1})
_NULLABLE = ({int, type(None)}, {0, 1, None})


def _label_list(value, unit_count: int, where: str, name: str, line: int, allow_null: bool) -> list:
    if not isinstance(value, list):
        raise DatasetImportError(f"{where} must be a list of 0/1", name, line)
    if len(value) != unit_count:
        raise DatasetImportError(f"{where} has {len(value)} labels, but reference_acus has {unit_count}", name, line)
    # The common case checked at C speed (half a million labels at RoSE scale): plain ints 0/1.
    allowed = _NULLABLE if allow_null else _PLAIN
    if set(map(type, value)) <= allowed[0] and set(value) <= allowed[1]:
        return value
    labels = []
    for v in value:
        if allow_null and v is None:
            labels.append(None)
        elif v in (0, 1) and not isinstance(v, float):
            labels.append(int(v))
        else:
            raise DatasetImportError(f"{where} holds {v!r}, not 0 or 1", name, line)
    return labels


def _text(obj: dict, key: str, name: str, line: int) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise DatasetImportError(f"{key!r} is missing or not a string", name, line)
    if not value.strip():
        raise DatasetImportError(f"{key!r} is empty", name, line)
    return value


def parse_record(obj, name: str, line: int) -> DocumentRecord:
    if not isinstance(obj, dict):
        raise DatasetImportError("a line must hold one JSON object", name, line)
    raw_id = obj.get("example_id")
    if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool) or str(raw_id).strip() == "":
        raise DatasetImportError("'example_id' is missing or empty", name, line)
    source = _text(obj, "source", name, line)
    reference = _text(obj, "reference", name, line)
    sentences = split_sentences(reference)
    if not sentences:
        raise DatasetImportError("'reference' has no sentence with a letter or digit", name, line)
    units = obj.get("reference_acus")
    if not isinstance(units, list) or not all(isinstance(u, str) for u in units):
        raise DatasetImportError("'reference_acus' must be a list of strings", name, line)
    for index, unit in enumerate(units):
        if not unit.strip():
            raise DatasetImportError(f"reference_acus[{index}] is empty", name, line)
    outputs = obj.get("system_outputs", {})
    if not isinstance(outputs, dict):
        raise DatasetImportError("'system_outputs' must be an object {system: summary}", name, line)
    summaries = {}
    for system, text in outputs.items():
        if not isinstance(text, str) or not text.strip():
            raise DatasetImportError(f"system_outputs[{system!r}] is empty or not a string", name, line)
        summaries[str(system)] = text.strip()

    annotations = obj.get("annotations") or {}
    if not isinstance(annotations, dict):
        raise DatasetImportError("'annotations' must be an object {system: {...}}", name, line)
    labels: dict[str, dict[str, list]] = {}
    for system, annotation in annotations.items():
        if system not in summaries:
            raise DatasetImportError(f"annotations name unknown system {system!r} (not in system_outputs)", name, line)
        if not isinstance(annotation, dict):
            raise DatasetImportError(f"annotations[{system!r}] must be an object", name, line)
        for key in ("acu", "normalized_acu"):
            if key in annotation and not isinstance(annotation[key], (int, float, type(None))):
                raise DatasetImportError(f"annotations[{system!r}][{key!r}] must be a number", name, line)
        per_annotator = annotation.get("annotator_labels")
        if per_annotator is not None:
            if not isinstance(per_annotator, dict) or not per_annotator:
                raise DatasetImportError(f"annotations[{system!r}]['annotator_labels'] must be an object", name, line)
            labels[system] = {
                str(a): _label_list(v, len(units), f"annotator_labels[{a!r}] of {system!r}", name, line, True)
                for a, v in per_annotator.items()
            }
        elif "acu_labels" in annotation:
            where = f"annotations[{system!r}]['acu_labels']"
            labels[system] = {
                SINGLE_ANNOTATOR: _label_list(annotation["acu_labels"], len(units), where, name, line, False)
            }
    alpha = obj.get("length_alpha")
    if alpha is not None:
        try:
            alpha = check_alpha(alpha)
        except DatasetImportError as exc:
            raise DatasetImportError(f"'length_alpha': {exc.problem}", name, line) from None
    return DocumentRecord(
        str(raw_id).strip(),
        source.strip(),
        sentences,
        [u.strip() for u in units],
        summaries,
        labels,
        (name, line),
        reference_text=reference,
        length_alpha=alpha,
    )


def read_rose(path: Path) -> list[DocumentRecord]:
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise DatasetImportError("file is missing (the rose format is one .jsonl file)", str(path))
    text = decode(path.read_bytes(), name)
    records: list[DocumentRecord] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = bounded_json.loads(raw, max_depth=MAX_JSON_DEPTH, max_int_digits=MAX_INT_DIGITS)
        except json.JSONDecodeError as exc:
            raise DatasetImportError(f"invalid JSON: {exc.msg} (column {exc.colno})", name, lineno) from None
        except bounded_json.TooDeep as exc:
            raise DatasetImportError(f"invalid record: {exc}", name, lineno) from None
        except bounded_json.NumberTooLong as exc:
            raise DatasetImportError(f"invalid record: {exc}", name, lineno) from None
        record = parse_record(obj, name, lineno)
        if record.external_id in seen:
            raise DatasetImportError(
                f"duplicate example_id {record.external_id!r} (first on line {seen[record.external_id]})", name, lineno
            )
        seen[record.external_id] = lineno
        records.append(record)
    if not records:
        raise DatasetImportError("no documents", name)
    return records
