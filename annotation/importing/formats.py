"""The dataset formats the importer reads, each a reader from a path to plain records."""

import math
from pathlib import Path

from .errors import DatasetImportError
from .limits import check_records
from .pyramid import read_pyramid
from .records import DocumentRecord
from .rose import read_rose

FORMATS = {"pyramid": read_pyramid, "rose": read_rose}


def guess_format(path: Path) -> str:
    return "pyramid" if Path(path).is_dir() else "rose"


def read_records(path: Path, fmt: str | None = None) -> list[DocumentRecord]:
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise DatasetImportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    return check_records(FORMATS[fmt](Path(path)))


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
