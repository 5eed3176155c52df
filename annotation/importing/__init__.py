"""Dataset import: format readers produce plain records; `store` validates and writes them."""
from .errors import DatasetImportError
from .store import FORMATS, ImportSummary, import_dataset

__all__ = ["DatasetImportError", "FORMATS", "ImportSummary", "import_dataset"]
