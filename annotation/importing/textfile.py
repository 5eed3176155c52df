"""Reading text files line by line with errors that name the file and line."""

import codecs
from pathlib import Path

from .errors import DatasetImportError

# Files that are not text at all, by their first bytes: what a lab uploads on the wrong form (a
# zipped pyramid folder as a JSONL file, an Excel workbook as a CSV file).
NOT_TEXT = (
    (b"PK\x03\x04", "a zip archive (a zipped folder, or an .xlsx or .ods workbook)"),
    (b"\x1f\x8b", "a gzip archive (such as .tar.gz)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel .xls workbook"),
    (b"%PDF-", "a PDF document"),
)


# The same by the file's name, for an archive whose first bytes are damaged (a corrupt .zip read as
# a JSONL file was refused as "bytes that are not UTF-8 at byte 0").
ARCHIVE_SUFFIXES = (
    (".zip", "a zip archive"),
    (".tar.gz", "a gzip archive (such as .tar.gz)"),
    (".tgz", "a gzip archive (such as .tar.gz)"),
    (".gz", "a gzip archive (such as .tar.gz)"),
    (".tar", "a tar archive"),
    (".xlsx", "an Excel workbook"),
    (".xls", "an Excel .xls workbook"),
    (".ods", "a spreadsheet workbook"),
    (".pdf", "a PDF document"),
)


def not_text(data: bytes) -> str | None:
    """What the file is when its first bytes say it is an archive, a workbook or a PDF; else None."""
    if data[257:262] == b"ustar":
        return "a tar archive"
    return next((kind for magic, kind in NOT_TEXT if data.startswith(magic)), None)


def decode(data: bytes, name: str, advice: str = "") -> str:
    """UTF-8 text; a leading byte order mark (Excel's and Notepad's "UTF-8 with BOM") is not part
    of it (it would else become part of the first document id, unit or summary). An archive, a
    workbook or a PDF is refused as such (with `advice`: which form or format reads it), not as
    "invalid JSON" or "bytes that are not UTF-8"; so is a file not UTF-8 named as one (.zip)."""
    if kind := not_text(data):
        raise DatasetImportError(f"the file is {kind}, not a text file" + (f"; {advice}" if advice else ""), name)
    if data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        raise DatasetImportError("the file is UTF-16 text; save it as UTF-8", name, 1)
    skipped = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        if kind := next((kind for suffix, kind in ARCHIVE_SUFFIXES if name.lower().endswith(suffix)), None):
            raise DatasetImportError(
                f"the file is {kind} (by its name; not a readable one), not a text file"
                + (f"; {advice}" if advice else ""),
                name,
            ) from None
        start = exc.start + skipped
        line = data[:start].count(b"\n") + 1
        raise DatasetImportError(
            f"bytes that are not UTF-8 at byte {start} ({data[start : start + 4]!r}); save the file as UTF-8",
            name,
            line,
        ) from None


def read_lines(path: Path, name: str) -> list[str]:
    """The file's lines; a final newline does not make an extra empty line.

    Only "\\n" ends a line (str.splitlines would also split on characters such as
    U+2028 that can occur inside a document)."""
    if not path.is_file():
        raise DatasetImportError("file is missing", name)
    text = decode(path.read_bytes(), name)
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
