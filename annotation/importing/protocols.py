"""Reader for RoSE's protocol-comparison files (its §5): one JSON array of examples.

Per example: ``example_id``, ``source``, ``reference``, ``system_outputs`` ({system: text}) and
``annotations`` ({system: {"prior", "ref_free", "ref_based": the mean of three 1-5 ratings;
"acu", "normalized_acu": the ACU scores of the same summary}}). A system named in the
annotations but not in the outputs, ``gold`` or ``reference``, is the reference summary rated as
one more system (RoSE's LLM file rates it so). ``reference_acus`` (a list of strings, in RoSE's
LLM file) become the reference's ACUs as in a RoSE JSONL file (``rose.reference_units``); without
them the reference waits for its authors. Optional keys of our export, read back:
``annotations[system]["raters"] = {protocol: {rater: score}}`` (each rater's own 1-5 score) and
``annotations[system]["ratings"] = {protocol: n}`` (how many ratings each protocol's mean holds;
default 3, as RoSE's). Files of the earlier export give one whole number under ``ratings``, which
is read as the count of every protocol of that summary.

The reader returns plain records, checked and bounded; nothing is written here.
"""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from config import bounded_json

from ..text import split_sentences
from .errors import DatasetImportError
from .jsonlines import document_problem
from .limits import MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_SYSTEM, check_records
from .records import DocumentRecord
from .rose import reference_units
from .textfile import decode

PROTOCOLS = ("prior", "ref_free", "ref_based")
REFERENCE_SYSTEMS = ("gold", "reference")  # the reference rated as a system when not among the outputs
MAX_EXAMPLES = 10_000
MAX_SYSTEMS = 100
MAX_RATERS = 50
MAX_RATER = 100  # ProtocolRating.rater
DEFAULT_RATINGS = 3  # RoSE: each protocol score is the mean of three workers' ratings


@dataclass
class RatedSummary:
    system: str
    scores: dict[str, float] = field(default_factory=dict)  # protocol -> mean score (1-5)
    raters: dict[str, dict[str, float]] = field(default_factory=dict)  # protocol -> rater -> score
    ratings: dict[str, int] = field(default_factory=dict)  # protocol -> how many ratings its mean holds
    acu: float | None = None
    normalized_acu: float | None = None


@dataclass
class ProtocolExample:
    record: DocumentRecord  # the document, its reference and every rated summary's text
    rated: list[RatedSummary]


def _number(value, low: float, high: float, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DatasetImportError(f"{where} must be a number, not {str(value)[:40]!r}")
    if not low <= value <= high:
        raise DatasetImportError(f"{where} is {value}, outside {low:g} to {high:g}")
    return float(value)


def _absent(value) -> bool:
    """Not rated: missing, null or an empty list (RoSE's LLM file gives the reference's Ref-based and
    ACU scores as [] and [[]])."""
    return value is None or (isinstance(value, list) and all(v == [] for v in value))


def _text(example: dict, key: str, index: int) -> str:
    value = example.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DatasetImportError(f"example {index}: {key!r} is missing, empty or not a string")
    return value.strip()


def _rated(system: str, annotation, index: int) -> RatedSummary:
    where = f"example {index}: annotations[{system[:40]!r}]"
    if not isinstance(annotation, dict):
        raise DatasetImportError(f"{where} must be an object")
    rated = RatedSummary(system)
    for protocol in PROTOCOLS:
        if not _absent(annotation.get(protocol)):
            rated.scores[protocol] = _number(annotation[protocol], 1, 5, f"{where}[{protocol!r}]")
    for key in ("acu", "normalized_acu"):
        if not _absent(annotation.get(key)):
            setattr(rated, key, _number(annotation[key], 0, 1, f"{where}[{key!r}]"))
    if (rated.acu is None) != (rated.normalized_acu is None):
        raise DatasetImportError(f"{where} has one of 'acu' and 'normalized_acu' without the other")
    rated.ratings = _counts(annotation.get("ratings", DEFAULT_RATINGS), set(rated.scores), where)
    rated.raters.update(_raters(annotation.get("raters") or {}, where))
    if not rated.scores and not rated.raters and rated.acu is None:
        raise DatasetImportError(f"{where} holds no rating and no ACU score")
    return rated


def _count(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RATERS:
        raise DatasetImportError(f"{where} must be a whole number from 1 to {MAX_RATERS}")
    return value


def _counts(ratings, protocols: set[str], where: str) -> dict[str, int]:
    """`ratings`: {protocol: n}, each protocol's own count (missing: DEFAULT_RATINGS); or, as the
    earlier export wrote it, one number standing for every protocol of the summary."""
    if not isinstance(ratings, dict):
        count = _count(ratings, f"{where}['ratings']")
        return dict.fromkeys(sorted(protocols), count)
    if not set(ratings) <= set(PROTOCOLS):
        raise DatasetImportError(
            f"{where}['ratings'] must be a whole number or an object {{protocol: number of ratings}} "
            f"of the protocols {', '.join(PROTOCOLS)}"
        )
    counts = {p: _count(n, f"{where}['ratings'][{p!r}]") for p, n in ratings.items()}
    return {p: counts.get(p, DEFAULT_RATINGS) for p in sorted(protocols)}


def _raters(raters, where: str) -> dict[str, dict[str, float]]:
    """`raters`: {protocol: {rater: 1-5 score}}, at most MAX_RATERS raters of a protocol, each named."""
    if not isinstance(raters, dict) or not set(raters) <= set(PROTOCOLS):
        raise DatasetImportError(f"{where}['raters'] must be an object {{protocol: {{rater: score}}}}")
    found: dict[str, dict[str, float]] = {}
    for protocol, per_rater in raters.items():
        if not isinstance(per_rater, dict) or len(per_rater) > MAX_RATERS:
            raise DatasetImportError(
                f"{where}['raters'][{protocol!r}] must be an object of at most {MAX_RATERS} raters"
            )
        for rater, score in per_rater.items():
            if not rater.strip() or len(rater) > MAX_RATER or "\x00" in rater:
                raise DatasetImportError(f"{where}: the rater name {rater[:40]!r} is empty or too long")
            value = _number(score, 1, 5, f"{where}['raters'][{protocol!r}][{rater[:40]!r}]")
            found.setdefault(protocol, {})[rater.strip()] = value
    return found


def parse_example(example, index: int) -> ProtocolExample:
    """One example of a protocol file; `index` is its number in the file, from 1 (for messages)."""
    if not isinstance(example, dict):
        raise DatasetImportError(f"example {index} must be a JSON object")
    raw_id = example.get("example_id")
    if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool) or not str(raw_id).strip():
        raise DatasetImportError(f"example {index}: 'example_id' is missing or empty")
    source, reference = _text(example, "source", index), _text(example, "reference", index)
    sentences = split_sentences(reference)
    if not sentences:
        raise DatasetImportError(f"example {index}: 'reference' has no sentence with a letter or digit")
    outputs, annotations = example.get("system_outputs"), example.get("annotations")
    if not isinstance(outputs, dict) or not isinstance(annotations, dict) or not annotations:
        raise DatasetImportError(f"example {index}: 'system_outputs' and 'annotations' must be objects")
    if len(outputs) > MAX_SYSTEMS or len(annotations) > MAX_SYSTEMS:
        raise DatasetImportError(f"example {index}: more than {MAX_SYSTEMS} systems")
    summaries = {}
    for system, text in outputs.items():
        if not isinstance(text, str) or not text.strip():
            raise DatasetImportError(f"example {index}: system_outputs[{system[:40]!r}] is empty or not a string")
        summaries[system] = text.strip()
    rated = []
    for system, annotation in annotations.items():
        if not system.strip() or len(system) > MAX_SYSTEM:
            raise DatasetImportError(f"example {index}: the system name {system[:40]!r} is empty or too long")
        if system not in summaries:
            if system not in REFERENCE_SYSTEMS:
                raise DatasetImportError(
                    f"example {index}: annotations name system {system[:40]!r}, which has no output "
                    f"(only {' and '.join(REFERENCE_SYSTEMS)} may stand for the reference)"
                )
            summaries[system] = reference
        rated.append(_rated(system, annotation, index))
    units = _reference_acus(example, index)
    record = DocumentRecord(str(raw_id).strip(), source, sentences, units, summaries, reference_text=reference)
    try:  # the bounds every import checks (field lengths, NUL characters), said of this example
        check_records([record])
    except DatasetImportError as exc:
        raise DatasetImportError(f"example {index}: {exc.problem}") from None
    return ProtocolExample(record, rated)


def _reference_acus(example: dict, index: int) -> list[str]:
    """`reference_acus` (RoSE's LLM file has them), read as the RoSE JSONL reader reads them; an
    example without them (missing, null or []) leaves its reference to the authors."""
    if example.get("reference_acus") in (None, []):
        return []
    try:
        return reference_units(example, None, None)
    except DatasetImportError as exc:
        raise DatasetImportError(f"example {index}: {exc.problem}") from None


def read_protocol_file(path: Path) -> list[ProtocolExample]:
    """The examples of a protocol file, all checked, or DatasetImportError naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise DatasetImportError("file is missing (a protocol file is one .json file)", path.name)
    text = decode(path.read_bytes(), path.name, advice="a pyramid folder's .zip or .tar.gz imports as “Pyramid folder”")
    try:
        data = bounded_json.loads(text, max_depth=MAX_JSON_DEPTH, max_int_digits=MAX_INT_DIGITS)
    except json.JSONDecodeError as exc:
        problem = document_problem(exc, text, kind="RoSE protocol comparison")
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            problem += (
                "; a protocol file is one JSON array of examples, and this file looks like JSON Lines"
                " (one object per line, as a RoSE JSONL dataset file)"
            )
        raise DatasetImportError(problem, path.name, exc.lineno) from None
    except (bounded_json.TooDeep, bounded_json.NumberTooLong) as exc:
        raise DatasetImportError(f"invalid file: {exc}", path.name) from None
    if not isinstance(data, list) or not data:
        raise DatasetImportError("a protocol file is a non-empty JSON array of examples", path.name)
    if len(data) > MAX_EXAMPLES:
        raise DatasetImportError(f"{len(data)} examples; at most {MAX_EXAMPLES} are read", path.name)
    examples, seen = [], {}
    for index, raw in enumerate(data, start=1):  # messages count examples from 1, as people do
        try:
            example = parse_example(raw, index)
        except DatasetImportError as exc:
            raise DatasetImportError(exc.problem, path.name) from None
        key = example.record.external_id
        if key in seen:
            raise DatasetImportError(
                f"example {index}: duplicate example_id {key!r} (first: example {seen[key]})", path.name
            )
        seen[key] = index
        examples.append(example)
    return examples


def read_protocol_records(path: Path) -> list[DocumentRecord]:
    """The dataset reader of the ``rose-protocols`` format: documents, references and summaries."""
    return [example.record for example in read_protocol_file(path)]
