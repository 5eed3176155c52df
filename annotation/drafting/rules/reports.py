"""What a verb of saying reports, split inside the report: "claims she shared a kiss with Harry in
Vegas" -> "claims she shared a kiss with Harry", "claims she shared a kiss in Vegas". The speaker
stays with each draft (guideline 5: what was said is a fact about the speaker), so no claim is
stated as a fact."""

from collections.abc import Callable

from ...language.tokens import Token, first_verb, is_verb, quote_depths
from ...language.words import MONTHS, QUOTES, REPORTING, TIME_WORDS

# Phrases that may say where or how the speaker spoke, not the reported event ("said in a statement").
SPEECH_FRAMES = frozenset(
    ["interview", "statement", "letter", "post", "tweet", "speech", "court", "report", "documents", "hearing"]
    + ["video", "message", "podcast", "radio", "television", "tv", "book", "column", "article", "email"]
)


def report_at(predicate: list[Token]) -> int | None:
    """Where the clause a verb of saying opening the predicate reports starts ("claims she shared
    ...", "said that the club was sold"): after the verb (and "that"), a subject of one to four
    words with no verb, quote or comma, then its verb; None otherwise."""
    if not predicate or predicate[0].lower not in REPORTING or not is_verb(predicate, 0):
        return None
    start = 2 if len(predicate) > 1 and predicate[1].lower == "that" else 1
    rest = predicate[start:]
    verb = first_verb(rest, 1)
    if verb is None or verb > 4 or any(t.text in {",", ";", ":"} or t.text in QUOTES for t in rest[:verb]):
        return None
    return start


def spoken_adjunct(piece: list[Token]) -> bool:
    """A phrase of a report that may be the speaker's: a time (when it was said: "on Sunday", "in
    2009") or a medium ("in a statement", "to a court")."""
    return any(
        t.lower in TIME_WORDS | MONTHS | SPEECH_FRAMES
        or t.number
        and len(t.text) == 4
        or t.lower in {"ago", "yesterday"}
        for t in piece
    )


def split_report(
    predicate: list[Token], variants: Callable[[list[Token]], list[list[Token]]]
) -> list[list[Token]] | None:
    """The reported clause's predicate split by `variants` (adjuncts, lists, pairs), each draft
    keeping the verb of saying and the reported subject; None when the predicate reports no
    plain clause, when a phrase split off may be the speaker's ("said ... on Sunday", "told
    ... in a statement") or when a quotation is in it."""
    start = report_at(predicate)
    if start is None or any(quote_depths(predicate)):
        return None
    rest = predicate[start:]
    verb = first_verb(rest, 1)
    if verb is None:
        return None
    inner = variants(rest[verb:])
    if len(inner) < 2:
        return None
    core = 0
    while all(len(v) > core and v[core].index == inner[0][core].index for v in inner):
        core += 1
    if any(spoken_adjunct(v[core:]) for v in inner):
        return None
    return [predicate[:start] + rest[:verb] + v for v in inner]
