"""Plain text helpers: word counts, sentence splitting and unit-to-sentence attachment."""
import re
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_TAG = re.compile(r"<t>(.*?)</t>", re.DOTALL)

# Function words carry no content; attaching a unit to a sentence by them would be noise.
STOPWORDS = frozenset(
    """a an the and or but nor of to in on at by for with from as into onto over under about
    after before during since until than then that this these those there here is are was were
    be been being am has have had having do does did will would shall should can could may might
    must it its it's he she they them their his her him we us our you your i me my not no so if
    who whom whose which what when where why how also just very s t""".split()
)


def word_count(text: str) -> int:
    """Words as whitespace-separated tokens: the |s| and |r| of the normalized ACU score."""
    return len(text.split())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def split_tagged_sentences(text: str) -> list[str]:
    """Sentences of a pyramid-format reference: each wrapped in <t> ... </t>."""
    return [" ".join(s.split()) for s in _SENTENCE_TAG.findall(text) if s.strip()]


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of a RoSE reference: one per line where it has line breaks (RoSE's CNN/DM
    records), otherwise split by pysbd's rule-based sentence boundary detection."""
    if "\n" in text.strip():
        return [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return [" ".join(s.split()) for s in _segmenter().segment(text) if s.strip()]


def attach_units_to_sentences(units: list[str], sentences: list[str]) -> list[int]:
    """For each unit, the index of the sentence it overlaps most in content words.

    Ties and units without overlap go to the previous unit's sentence when it is among the
    best (units are written in reference order), otherwise to the earliest best sentence.
    """
    sentence_words = [content_words(s) or set(words(s)) for s in sentences]
    attached: list[int] = []
    previous = 0
    for unit in units:
        unit_words = content_words(unit) or set(words(unit))
        overlaps = [len(unit_words & sw) for sw in sentence_words]
        best = max(overlaps)
        candidates = [i for i, o in enumerate(overlaps) if o == best]
        choice = previous if previous in candidates else candidates[0]
        attached.append(choice)
        previous = choice
    return attached
