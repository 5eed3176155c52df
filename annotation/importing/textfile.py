"""Reading text files line by line with errors that name the file and line."""

from pathlib import Path

from .errors import DatasetImportError


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetImportError(
            f"bytes that are not UTF-8 at byte {exc.start} ({data[exc.start : exc.start + 4]!r})", name, line
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
