"""Reading text files line by line with errors that name the file and line."""

import codecs
from pathlib import Path

from .errors import DatasetImportError


def decode(data: bytes, name: str) -> str:
    """UTF-8 text; a leading byte order mark (Excel's and Notepad's "UTF-8 with BOM") is not part
    of it (it would else become part of the first document id, unit or summary)."""
    if data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        raise DatasetImportError("the file is UTF-16 text; save it as UTF-8", name, 1)
    skipped = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start + skipped
        line = data[:start].count(b"\n") + 1
        raise DatasetImportError(
            f"bytes that are not UTF-8 at byte {start} ({data[start : start + 4]!r})", name, line
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
