"""Step 6: non-finite adjuncts and complements of verbs of saying as finite sentences of their own."""

from lemminflect import getAllLemmas, getInflection

from ..lexicon import PREPOSITIONS, VERBS
from .tokens import Token, be, first_verb, is_verb, quote_depths, strip, text_of, verb_form
from .words import NONFINITE_LEAD, NOT_SURNAMES, SAY


def past_tense(word: str, plural: bool) -> str:
    """The past tense of a verb form ("winning" -> "won", "being" -> "was")."""
    lower = word.lower()
    if lower == "being":
        return "were" if plural else "was"
    if lower == "having":
        return "had"
    lemmas = getAllLemmas(lower, "VERB").get("VERB")
    if not lemmas:
        return word
    past = getInflection(lemmas[0], "VBD")
    return past[0] if past else word


def nonfinite_at(tokens: list[Token], i: int) -> bool:
    """tokens[i] leads a non-finite adjunct: "after winning", "despite being", "to show" after an object."""
    if i + 1 >= len(tokens) or tokens[i + 1].capitalised:
        return False
    t, nxt = tokens[i].lower, tokens[i + 1].lower
    if t in NONFINITE_LEAD:
        return verb_form(nxt) == "VBG" or nxt in {"being", "having"}
    if t == "to" and i >= 2 and tokens[i - 1].text.isalnum() and not is_verb(tokens, i - 1):
        return nxt in VERBS and getAllLemmas(nxt, "VERB").get("VERB", ("",))[0] == nxt  # "to show"
    return False


def complement_at(tokens: list[Token], i: int) -> int | None:
    """Where the complement clause of a verb of saying at tokens[i] starts, if it has its own
    subject and verb ("claims she shared", "said that the hedge was")."""
    if tokens[i].lower not in SAY or not is_verb(tokens, i):
        return None
    j = i + 1 + (i + 1 < len(tokens) and tokens[i + 1].lower == "that")
    rest = tokens[j:]
    if len(rest) < 3 or not rest[0].text.isalnum() or rest[0].lower in PREPOSITIONS or rest[0].lower == "to":
        return None
    inner = first_verb(rest, 1)
    if inner is None or inner > 8 or any(t.text == "," for t in rest[:inner]):
        return None
    return j


def embedded_start(tokens: list[Token], verb_end: int, quoted: list[int]) -> int | None:
    for i in range(max(verb_end - 1, 0), len(tokens) - 1):
        if quoted[i]:
            continue
        if i >= verb_end and nonfinite_at(tokens, i):
            return i
        if i < verb_end + 2 and complement_at(tokens, i) is not None:
            return i + 1
    return None


def embedded_clauses(tokens: list[Token], sentence: str) -> list[str]:
    """Facts inside one clause as sentences of their own:

    - a non-finite adjunct ("after winning The Open last year", "despite being jailed for life")
      with the clause's subject and a finite verb: "McIlroy won The Open last year.";
    - the complement of a verb of saying or thinking with its own subject and verb ("claims she
      shared a kiss" -> "she shared a kiss"), a subject pronoun replaced by the clause's subject
      when that is a name."""
    verb = first_verb(tokens)
    if verb is None or verb == 0:
        return []
    subject = strip(tokens[:verb])
    subject_text = text_of(subject, sentence)
    plural = be(subject, False) == "are"
    named = all(t.capitalised for t in subject if t.text.isalpha())
    quoted = quote_depths(tokens)
    out = []
    for i in range(verb, len(tokens) - 1):
        if quoted[i]:
            continue
        if i > verb and nonfinite_at(tokens, i):
            end = next(
                (k for k in range(i + 2, len(tokens)) if tokens[k].text in {",", ";"} or nonfinite_at(tokens, k)),
                len(tokens),
            )
            rest = text_of(strip(tokens[i + 2 : end]), sentence)
            if rest:
                out.append(f"{subject_text} {past_tense(tokens[i + 1].text, plural)} {rest}")
            continue
        j = complement_at(tokens, i) if i - verb <= 2 else None
        if j is not None:
            rest = strip(tokens[j:])
            words = [text_of(rest, sentence)]
            if rest[0].lower in {"he", "she"} and named and subject and subject[-1].text not in NOT_SURNAMES:
                words = [subject_text, text_of(rest[1:], sentence)]
            out.append(" ".join(words))
            break
    return out
