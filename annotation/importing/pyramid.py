"""Reader for the pyramid directory layout of REALSumm (shared/data/realsumm/README.md).

ids.txt, documents.txt and references.txt hold one line per document; summaries/SYSTEM.summary
one summary per document and labels/SYSTEM.label one tab-separated 0/1 per unit. SCUs.txt (one
line of tab-separated units per document) is optional: a folder without it, or with an empty one,
imports with no units (a dataset whose ACUs its authors will write here); an empty line leaves that
document without units. Labels need the units they label. A reference line with <t> ... </t> tags (REALSumm) keeps its tagged
sentences; one without tags (the PyrXSum folder of the Lite2-3Pyramid repository) is split with
the sentence splitter (``annotation.text.split_sentences``).
"""

from pathlib import Path

from ..text import has_sentence_tags, split_sentences, split_tagged_sentences
from .errors import DatasetImportError
from .records import SINGLE_ANNOTATOR, DocumentRecord
from .textfile import read_lines

PER_DOCUMENT_FILES = ("ids.txt", "documents.txt", "references.txt")
UNITS_FILE = "SCUs.txt"


def _files(folder: Path, suffix: str) -> list[Path]:
    """The folder's files ending in `suffix`, by name; hidden ones are not data (an archive made on
    a Mac holds an AppleDouble "._SYSTEM.summary" beside each file with extended attributes)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"*{suffix}") if not p.name.startswith("."))


def _check_count(lines: list[str], expected: int, name: str) -> None:
    if len(lines) != expected:
        raise DatasetImportError(
            f"{len(lines)} lines, but ids.txt has {expected} documents", name, min(len(lines), expected) + 1
        )


def _nonempty(value: str, name: str, line: int, what: str) -> str:
    if not value.strip():
        raise DatasetImportError(f"empty {what}", name, line)
    return value


def _parse_labels(line: str, name: str, lineno: int, unit_count: int) -> list[int]:
    cells = line.split("\t") if line.strip() else []
    if len(cells) != unit_count:
        raise DatasetImportError(
            f"{len(cells)} labels, but the reference of this document has {unit_count} units (SCUs.txt)",
            name,
            lineno,
        )
    labels = []
    for cell in cells:
        if cell.strip() not in ("0", "1"):
            raise DatasetImportError(f"label {cell.strip()!r} is not 0 or 1", name, lineno)
        labels.append(int(cell))
    return labels


def _unit_lines(root: Path, documents: int) -> list[str]:
    """SCUs.txt's lines, one per document; a missing or blank file gives every document no units."""
    path = root / UNITS_FILE
    lines = read_lines(path, UNITS_FILE) if path.is_file() else []
    if not any(line.strip() for line in lines):
        labels = _files(root / "labels", ".label")
        if labels:
            state = "empty" if path.is_file() else "missing"
            raise DatasetImportError(
                f"file is {state}, but labels/{labels[0].name} labels units: give the units, "
                "or leave out labels/ to import the documents without units",
                UNITS_FILE,
            )
        return [""] * documents
    _check_count(lines, documents, UNITS_FILE)
    return lines


def read_pyramid(root: Path) -> list[DocumentRecord]:
    root = Path(root)
    if not root.is_dir():
        raise DatasetImportError("not a directory (the pyramid format is a folder with ids.txt)", str(root))
    ids = read_lines(root / "ids.txt", "ids.txt")
    if not ids:
        raise DatasetImportError("no documents", "ids.txt")
    columns = {"ids.txt": ids}
    for name in PER_DOCUMENT_FILES[1:]:
        columns[name] = read_lines(root / name, name)
        _check_count(columns[name], len(ids), name)
    columns[UNITS_FILE] = _unit_lines(root, len(ids))

    records: list[DocumentRecord] = []
    seen: dict[str, int] = {}
    for i, external_id in enumerate(ids):
        line = i + 1
        external_id = _nonempty(external_id, "ids.txt", line, "document id").strip()
        if external_id in seen:
            raise DatasetImportError(
                f"duplicate id {external_id!r} (first on line {seen[external_id]})", "ids.txt", line
            )
        seen[external_id] = line
        source = _nonempty(columns["documents.txt"][i], "documents.txt", line, "document")
        reference = _nonempty(columns["references.txt"][i], "references.txt", line, "reference")
        if has_sentence_tags(reference):
            sentences = split_tagged_sentences(reference)
            if not sentences:
                raise DatasetImportError("only empty <t> ... </t> sentences in the reference", "references.txt", line)
            given = " ".join(sentences)
        else:
            sentences, given = split_sentences(reference.strip()), reference.strip()
        if not sentences:
            raise DatasetImportError("the reference has no sentence with a letter or digit", "references.txt", line)
        unit_line = columns[UNITS_FILE][i]
        units = [u.strip() for u in unit_line.split("\t")] if unit_line.strip() else []
        for unit in units:
            _nonempty(unit, UNITS_FILE, line, "unit (two tabs in a row)")
        records.append(
            DocumentRecord(
                external_id, source.strip(), sentences, units, origin=("ids.txt", line), reference_text=given
            )
        )

    summaries_dir = root / "summaries"
    labels_dir = root / "labels"
    summary_files = _files(summaries_dir, ".summary")
    systems = [p.stem for p in summary_files]
    for path in summary_files:
        name = f"summaries/{path.name}"
        lines = read_lines(path, name)
        _check_count(lines, len(ids), name)
        for i, text in enumerate(lines):
            records[i].summaries[path.stem] = _nonempty(text, name, i + 1, "summary").strip()

    label_files = _files(labels_dir, ".label")
    for path in label_files:
        name = f"labels/{path.name}"
        if path.stem not in systems:
            raise DatasetImportError(f"unknown system {path.stem!r}: there is no summaries/{path.stem}.summary", name)
        lines = read_lines(path, name)
        _check_count(lines, len(ids), name)
        for i, line in enumerate(lines):
            labels = _parse_labels(line, name, i + 1, len(records[i].units))
            records[i].labels.setdefault(path.stem, {})[SINGLE_ANNOTATOR] = labels
    return records
