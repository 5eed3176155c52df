"""Reader for RoSE JSONL: one JSON object per document.

Keys: `example_id`, `source`, `reference` (one sentence per line in RoSE's CNN/DM records,
else a paragraph split by a sentence splitter), `reference_acus` (list of strings),
`system_outputs` ({system: text}), optional `annotations`
({system: {"acu_labels": [0/1, ...], optional "acu", "normalized_acu"}}), optional `count_id`.

Extension (written by our export when a summary has several annotators, read back on
import): `annotations[system]["annotator_labels"] = {annotator: [0/1/null, ...]}`, the
labels of each worker; `acu_labels` then holds their majority. With them our export writes
`annotations[system]["label_sources"] = {annotator: {"round", "kind", "provider", "worker",
"seconds"}}`: where each annotator's labels came from (`kind`: `imported` expert labels, an
`expert` round, a `crowd` round under its worker's provider and id; optional: `gold`
{"correct", "total"}, the worker's gold record on that work, and a crowd worker's state, `blocked`
with `block_reason`, and `excluded`). An annotator it does not name gave imported expert labels.
`annotations[system]["uncounted_labels"] = [{"labels", "status", "feedback", and the keys of a
label source}]`: labels that count nowhere, work the lead rejected (`status` "rejected", with the
`feedback` the worker was given) or the work of an excluded worker ("approved", `excluded` true).
`reference_acu_sentences` = [sentence index from 0, ...], one per ACU: the sentence each ACU was
written under (without it, each goes to the sentence it shares most content words with).
`reference_approved` = false: the ACUs were not yet proofread and approved (they come back as
drafts of a reference an author goes on writing; without it, imported ACUs are approved).
"""

from pathlib import Path

from ..text import line_sentences, split_sentences
from .errors import DatasetImportError
from .jsonlines import json_lines
from .limits import MAX_INT_DIGITS, MAX_JSON_DEPTH, check_alpha
from .records import SINGLE_ANNOTATOR, SOURCE_KINDS, UNCOUNTED_STATUSES, DocumentRecord, LabelSource, UncountedLabels
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
    # A line of our export (it says where each ACU was written) holds one sentence per line, even
    # a reference of one sentence, which the sentence splitter might cut in two.
    sentences = line_sentences(reference) if "reference_acu_sentences" in obj else split_sentences(reference)
    if not sentences:
        raise DatasetImportError("'reference' has no sentence with a letter or digit", name, line)
    units = reference_units(obj, name, line)
    summaries = _summaries(obj, name, line)
    labels = _labels(obj, summaries, len(units), name, line)
    sources = _sources(obj, labels, name, line)
    return DocumentRecord(
        str(raw_id).strip(),
        source.strip(),
        sentences,
        units,
        summaries,
        labels,
        (name, line),
        reference_text=reference,
        length_alpha=_length_alpha(obj, name, line),
        sources=sources,
        uncounted=_uncounted(obj, len(units), name, line),
        unit_sentences=_unit_sentences(obj, len(units), len(sentences), name, line),
        approved=_approved(obj, name, line),
    )


def _approved(obj: dict, name: str, line: int) -> bool:
    """`reference_approved`: false when the ACUs were still being written or proofread."""
    approved = obj.get("reference_approved", True)
    if not isinstance(approved, bool):
        raise DatasetImportError("'reference_approved' must be true or false", name, line)
    return approved


def _unit_sentences(obj: dict, unit_count: int, sentence_count: int, name: str, line: int) -> list[int] | None:
    """`reference_acu_sentences`, when given: the sentence (from 0) each unit was written under."""
    given = obj.get("reference_acu_sentences")
    if given is None:
        return None
    if (
        not isinstance(given, list)
        or len(given) != unit_count
        or not all(type(i) is int and 0 <= i < sentence_count for i in given)
    ):
        raise DatasetImportError(
            f"'reference_acu_sentences' must hold one sentence index (0 to {sentence_count - 1}) per "
            f"reference_acus entry ({unit_count})",
            name,
            line,
        )
    return given


def _length_alpha(obj: dict, name: str, line: int):
    """`length_alpha`, when given (checked as `limits.check_alpha` checks it), else None."""
    alpha = obj.get("length_alpha")
    if alpha is None:
        return None
    try:
        return check_alpha(alpha)
    except DatasetImportError as exc:
        raise DatasetImportError(f"'length_alpha': {exc.problem}", name, line) from None


def reference_units(obj: dict, name: str | None, line: int | None) -> list[str]:
    """`reference_acus`: a list of strings, none empty; each trimmed. (The protocol comparison
    reader reads its files' `reference_acus` with this too.)"""
    units = obj.get("reference_acus")
    if not isinstance(units, list) or not all(isinstance(u, str) for u in units):
        raise DatasetImportError("'reference_acus' must be a list of strings", name, line)
    for index, unit in enumerate(units):
        if not unit.strip():
            raise DatasetImportError(f"reference_acus[{index}] is empty", name, line)
    return [unit.strip() for unit in units]


def _summaries(obj: dict, name: str, line: int) -> dict[str, str]:
    """`system_outputs`: {system: summary}, each a non-empty string."""
    outputs = obj.get("system_outputs", {})
    if not isinstance(outputs, dict):
        raise DatasetImportError("'system_outputs' must be an object {system: summary}", name, line)
    summaries = {}
    for system, text in outputs.items():
        if not isinstance(text, str) or not text.strip():
            raise DatasetImportError(f"system_outputs[{system!r}] is empty or not a string", name, line)
        summaries[str(system)] = text.strip()
    return summaries


def _labels(obj: dict, summaries: dict, unit_count: int, name: str, line: int) -> dict[str, dict[str, list]]:
    """`annotations`: {system: {annotator: labels}} of the systems it names (all in `summaries`)."""
    annotations = obj.get("annotations") or {}
    if not isinstance(annotations, dict):
        raise DatasetImportError("'annotations' must be an object {system: {...}}", name, line)
    labels: dict[str, dict[str, list]] = {}
    for system, annotation in annotations.items():
        if system not in summaries:
            raise DatasetImportError(f"annotations name unknown system {system!r} (not in system_outputs)", name, line)
        found = _system_labels(system, annotation, unit_count, name, line)
        if found is not None:
            labels[system] = found
    return labels


def _system_labels(system: str, annotation, unit_count: int, name: str, line: int) -> dict[str, list] | None:
    """One system's labels: per annotator (`annotator_labels`), else the one `acu_labels`, else None."""
    if not isinstance(annotation, dict):
        raise DatasetImportError(f"annotations[{system!r}] must be an object", name, line)
    for key in ("acu", "normalized_acu"):
        if key in annotation and not isinstance(annotation[key], (int, float, type(None))):
            raise DatasetImportError(f"annotations[{system!r}][{key!r}] must be a number", name, line)
    per_annotator = annotation.get("annotator_labels")
    if per_annotator is not None:
        if not isinstance(per_annotator, dict) or not per_annotator:
            raise DatasetImportError(f"annotations[{system!r}]['annotator_labels'] must be an object", name, line)
        return {
            str(a): _label_list(v, unit_count, f"annotator_labels[{a!r}] of {system!r}", name, line, True)
            for a, v in per_annotator.items()
        }
    if "acu_labels" in annotation:
        where = f"annotations[{system!r}]['acu_labels']"
        return {SINGLE_ANNOTATOR: _label_list(annotation["acu_labels"], unit_count, where, name, line, False)}
    return None


MAX_NAME = 200  # a round's name and a worker's id are stored in fields of 200 characters
MAX_SECONDS = 366 * 24 * 3600
MAX_COUNT = 2**31 - 1  # gold counts are stored in integer fields


def _given(obj: dict, key: str):
    """(system, its annotation, the annotation's `key`, where it is) of each system whose annotation has `key`."""
    for system, annotation in (obj.get("annotations") or {}).items():
        if annotation.get(key) is not None:
            yield system, annotation, annotation[key], f"annotations[{system!r}][{key!r}]"


def _sources(obj: dict, labels: dict[str, dict[str, list]], name: str, line: int) -> dict[str, dict[str, LabelSource]]:
    """`label_sources` of each system's annotators, checked against its `annotator_labels`."""
    found: dict[str, dict[str, LabelSource]] = {}
    for system, annotation, given, where in _given(obj, "label_sources"):
        if not isinstance(given, dict):
            raise DatasetImportError(f"{where} must be an object {{annotator: source}}", name, line)
        if annotation.get("annotator_labels") is None:
            raise DatasetImportError(f"{where} needs the 'annotator_labels' they describe", name, line)
        found[system] = {}
        for annotator, source in given.items():
            if annotator not in labels.get(system, {}):
                raise DatasetImportError(f"{where} names {annotator!r}, who has no annotator_labels", name, line)
            found[system][annotator] = _source(source, f"{where}[{annotator!r}]", name, line)
    return found


def _source(source, where: str, name: str, line: int) -> LabelSource:
    if not isinstance(source, dict):
        raise DatasetImportError(f"{where} must be an object", name, line)
    kind, provider = source.get("kind"), source.get("provider")
    if kind not in SOURCE_KINDS:
        raise DatasetImportError(f"{where}['kind'] must be one of {', '.join(SOURCE_KINDS)}", name, line)
    texts = {}
    for key in ("round", "worker"):
        value = source.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
            raise DatasetImportError(f"{where}[{key!r}] must be a text of 1 to {MAX_NAME} characters", name, line)
        texts[key] = value.strip()
    if not isinstance(provider, str) or not provider:  # which providers: hits.services.dataset_import
        raise DatasetImportError(f"{where}['provider'] must be a provider's name", name, line)
    seconds = source.get("seconds")
    if seconds is not None and (
        not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 <= seconds < MAX_SECONDS
    ):
        raise DatasetImportError(f"{where}['seconds'] must be a number of seconds (0 to a year) or null", name, line)
    state = _worker_state(source, kind, where, name, line)
    return LabelSource(
        kind, texts["round"], provider, texts["worker"], seconds, gold=_gold(source, where, name, line), **state
    )


def _gold(source: dict, where: str, name: str, line: int) -> tuple[int, int] | None:
    """`gold` {"correct", "total"}: whole numbers, correct at most total (None when not given)."""
    gold = source.get("gold")
    if gold is None:
        return None
    counts = [gold.get(key) for key in ("correct", "total")] if isinstance(gold, dict) else []
    if (
        len(counts) != 2
        or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_COUNT for c in counts)
        or counts[0] > counts[1]
    ):
        raise DatasetImportError(f'{where}[\'gold\'] must be {{"correct": n, "total": m}} with 0 <= n <= m', name, line)
    return counts[0], counts[1]


def _worker_state(source: dict, kind: str, where: str, name: str, line: int) -> dict:
    """A crowd worker's `blocked` (with `block_reason`) and `excluded`, each optional."""
    state = {key: source.get(key, False) for key in ("blocked", "excluded")}
    for key, value in state.items():
        if not isinstance(value, bool):
            raise DatasetImportError(f"{where}[{key!r}] must be true or false", name, line)
    reason = source.get("block_reason", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise DatasetImportError(
            f"{where}['block_reason'] must be a text of at most {MAX_REASON} characters", name, line
        )
    if kind != "crowd" and (state["blocked"] or state["excluded"]):
        raise DatasetImportError(f"{where} is an expert's: expert labels are never blocked or excluded", name, line)
    return {**state, "block_reason": reason.strip() if state["blocked"] else ""}


MAX_REASON = 10_000  # a block reason or a rejection's feedback


def _uncounted(obj: dict, unit_count: int, name: str, line: int) -> dict[str, list[UncountedLabels]]:
    """`uncounted_labels` of each system: labels that count nowhere, each with its source."""
    found: dict[str, list[UncountedLabels]] = {}
    for system, _, given, where in _given(obj, "uncounted_labels"):
        if not isinstance(given, list):
            raise DatasetImportError(f"{where} must be a list of objects", name, line)
        found[system] = [_uncounted_item(item, unit_count, f"{where}[{i}]", name, line) for i, item in enumerate(given)]
    return found


def _uncounted_item(item, unit_count: int, where: str, name: str, line: int) -> UncountedLabels:
    if not isinstance(item, dict):
        raise DatasetImportError(f"{where} must be an object", name, line)
    labels = _label_list(item.get("labels"), unit_count, f"{where}['labels']", name, line, True)
    source = _source(item, where, name, line)
    status, feedback = item.get("status"), item.get("feedback", "")
    if status not in UNCOUNTED_STATUSES:
        raise DatasetImportError(f"{where}['status'] must be one of {', '.join(UNCOUNTED_STATUSES)}", name, line)
    if status == "approved" and not source.excluded:
        raise DatasetImportError(
            f"{where} is approved work of a worker not excluded: labels that count go in 'annotator_labels'",
            name,
            line,
        )
    if not isinstance(feedback, str) or len(feedback) > MAX_REASON:
        raise DatasetImportError(f"{where}['feedback'] must be a text of at most {MAX_REASON} characters", name, line)
    return UncountedLabels(labels, source, status, feedback.strip())


# Where a file of one indented JSON document most likely belongs.
PROTOCOL_ADVICE = "a RoSE protocol comparison file imports as “RoSE protocol comparison”"


def read_rose(path: Path) -> list[DocumentRecord]:
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise DatasetImportError("file is missing (the rose format is one .jsonl file)", str(path))
    text = decode(path.read_bytes(), name, advice="a pyramid folder's .zip or .tar.gz imports as “Pyramid folder”")
    records: list[DocumentRecord] = []
    seen: dict[str, int] = {}
    lines = json_lines(
        text, name, kind="RoSE JSONL", max_depth=MAX_JSON_DEPTH, max_int_digits=MAX_INT_DIGITS, advice=PROTOCOL_ADVICE
    )
    for lineno, obj in lines:
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
