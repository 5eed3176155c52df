"""Dataset readers: each format becomes plain records (`formats.read_records`), validated
before anything is written. Writing them is `hits.services.dataset_import` (it also writes
imported label rounds, which belong to the hits app)."""

from .errors import DatasetExists, DatasetImportError
from .formats import FORMATS, guess_format, read_records

__all__ = ["DatasetExists", "DatasetImportError", "FORMATS", "guess_format", "read_records"]
