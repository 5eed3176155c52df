"""lemminflect's lexicon of English word forms, imported without its spaCy hook.

When spaCy is installed (the optional parsed drafter), `import lemminflect` imports it too, to add
token extensions the rules never use; spaCy pulls in thinc and torch, a second or more at the start of
every process that loads Django's URLs. Refusing spaCy during that one import skips the hook; spaCy
is imported later, where the parsed drafter needs it, and works as before.
"""

import sys
from importlib.abc import MetaPathFinder


class _NoSpacy(MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "spacy":
            raise ModuleNotFoundError("spaCy is not imported with lemminflect", name=fullname)
        return None


_finder = _NoSpacy()
sys.meta_path.insert(0, _finder)
try:
    from lemminflect import getAllInflections, getAllLemmas, getInflection
finally:
    sys.meta_path.remove(_finder)

__all__ = ["getAllInflections", "getAllLemmas", "getInflection"]
