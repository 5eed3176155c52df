"""The dataset formats the importer reads, each a reader from a path to plain records."""

from pathlib import Path

from .errors import DatasetImportError
from .limits import check_alpha, check_records
from .protocols import read_protocol_records
from .pyramid import read_pyramid
from .records import DocumentRecord
from .rose import read_rose

FORMATS = {"pyramid": read_pyramid, "rose": read_rose, "rose-protocols": read_protocol_records}
SINGLE_FILE_FORMATS = ("rose", "rose-protocols")
__all__ = ["FORMATS", "SINGLE_FILE_FORMATS", "check_alpha", "guess_format", "read_records"]


def guess_format(path: Path) -> str:
    return "pyramid" if Path(path).is_dir() else "rose"


def read_records(path: Path, fmt: str | None = None) -> list[DocumentRecord]:
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise DatasetImportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    return check_records(FORMATS[fmt](Path(path)))
