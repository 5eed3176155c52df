"""Lists and places: one draft per item of a plain list of lower-case nouns ("failed to address
corruption , poverty and rise of Boko Haram"), and "X is in Y" for a place written "Town , Region"
or "Town in Country" after a preposition ("from West Linn , Oregon" -> "West Linn is in Oregon.")."""

from ...language.inflections import getAllLemmas
from ...language.lexicon import DETERMINERS, PREPOSITIONS
from ...language.tokens import Token, is_verb, quote_depths, text_of, verb_form
from ...language.words import MONTHS, NAME_WORD, TIME_WORDS
from ...text import STOPWORDS

# Prepositions a place follows ("from West Linn , Oregon", "in Hama in Syria").
PLACE_PREPOSITIONS = frozenset(["in", "from", "at", "near", "outside", "to"])


def plain_word(tokens: list[Token], k: int) -> bool:
    """A lower-case content word that is no past or -ing verb form ("corruption", "rise")."""
    t = tokens[k]
    return (
        t.text.isalpha()
        and not t.capitalised
        and t.lower not in STOPWORDS
        and verb_form(t.lower) not in {"VBD", "VBN", "VBG"}
    )


def first_items(tokens: list[Token], i: int) -> tuple[list[tuple[int, int]], int] | None:
    """The items before the last of a list "A , B and C" (", and C" too) starting at tokens[i],
    one word each, and where the last item starts; None when no list closed by "and" starts there."""
    items = []
    k = i
    while k + 1 < len(tokens) and plain_word(tokens, k) and tokens[k + 1].lower in {",", "and"}:
        items.append((k, k + 1))
        k += 2
        if tokens[k - 1].lower == "and":
            return items, k
        if k < len(tokens) and tokens[k].lower == "and":
            return items, k + 1
    return None


def list_after(tokens: list[Token], i: int) -> tuple[list[tuple[int, int]], int] | None:
    """The items (token spans) of a list of single lower-case nouns starting at tokens[i]: "A , B
    and C" (the last one may take an "of" phrase: "rise of Boko Haram"), and where the list ends;
    None when tokens[i:] holds no such list."""
    found = first_items(tokens, i)
    if found is None:
        return None
    items, k = found
    if k >= len(tokens) or not plain_word(tokens, k):
        return None
    end = k + 1
    if end < len(tokens) and tokens[end].lower == "of":  # "rise of Boko Haram": the noun's own phrase
        end += 1
        while end < len(tokens) and (tokens[end].capitalised or tokens[end].lower in DETERMINERS):
            end += 1
        if end == k + 2:
            return None
    return items + [(k, end)], end


def split_noun_lists(tokens: list[Token]) -> list[list[Token]]:
    """A predicate whose object (or the noun of its phrase) is a list of three or more plain
    nouns ("failed to address corruption , poverty and rise of Boko Haram"): one copy per item.
    Only where the list follows its verb or preposition directly (no word before it may modify
    every item: "sheer , metallic and shiny fabrics" has none), nothing but the end of the
    clause follows it (a phrase after it may be the last item's), and outside quotations."""
    quoted = quote_depths(tokens)
    for i in range(1, len(tokens) - 4):
        before = tokens[i - 1]
        verb = (
            is_verb(tokens, i - 1)
            or i >= 2
            and tokens[i - 2].lower == "to"
            and bool(getAllLemmas(before.lower, "VERB"))
        )
        if quoted[i] or not (verb or before.lower in PREPOSITIONS - {"between", "of"}):
            continue
        found = list_after(tokens, i)
        if found is None:
            continue
        items, end = found
        if len(items) < 3 or end != len(tokens) or any(quoted[i:end]):
            return [tokens]
        return [tokens[:i] + tokens[a:b] for a, b in items]
    return [tokens]


def name_run(tokens: list[Token], i: int) -> int:
    """The end of the run of one to three name words (no month or weekday) starting at tokens[i];
    i when there is none."""
    end = i
    while (
        end < len(tokens)
        and end - i < 3
        and NAME_WORD.match(tokens[end].text)
        and tokens[end].lower not in MONTHS | TIME_WORDS | DETERMINERS
    ):
        end += 1
    return end


def place_facts(tokens: list[Token], sentence: str) -> list[str]:
    """ "from West Linn , Oregon" -> "West Linn is in Oregon.", "in Hama in Syria" -> "Hama is in
    Syria.": a place after a preposition, then a name after a comma or "in", ending the phrase
    (not a list: "in Italy , Spain and Turkey" gives nothing), outside quotations."""
    quoted = quote_depths(tokens)
    out = []
    for i in range(len(tokens) - 3):
        if tokens[i].lower not in PLACE_PREPOSITIONS or quoted[i] or tokens[i].capitalised:
            continue
        town_end = name_run(tokens, i + 1)
        if town_end == i + 1 or town_end >= len(tokens) - 1 or tokens[town_end].lower not in {",", "in"}:
            continue
        region_end = name_run(tokens, town_end + 1)
        if region_end == town_end + 1:
            continue
        if not place_ends(tokens, region_end):
            continue
        town = text_of(tokens[i + 1 : town_end], sentence)
        region = text_of(tokens[town_end + 1 : region_end], sentence)
        out.append(f"{town} is in {region}")
    return out


def place_ends(tokens: list[Token], k: int) -> bool:
    """The phrase "Town , Region" ends at tokens[k]: the sentence ends, or punctuation or a
    preposition follows; not a list ("in Italy , Spain and Turkey"), not a subject with its verb
    ("in London , Scotland Yard said": the name after the comma is the speaker)."""
    after = tokens[k] if k < len(tokens) else None
    if after is None or after.text in {".", ";", ":", "-", ")"}:
        return True
    if after.text == ",":
        return not list_follows(tokens, k)
    return after.lower in PREPOSITIONS and not after.capitalised


def list_follows(tokens: list[Token], comma: int) -> bool:
    """After the comma at tokens[comma] another name and "and" follow: the names are a list."""
    k = name_run(tokens, comma + 1)
    return k > comma + 1 and k < len(tokens) and tokens[k].lower in {",", "and", "or", "&"}
