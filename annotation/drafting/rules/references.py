"""Step 2: names carried within a reference (pronouns, roles, surnames) and the "X is Y" facts they reveal."""

from dataclasses import dataclass

from ...language.lexicon import AUXILIARIES, DETERMINERS, FRONT_SUBORDINATORS, PREPOSITIONS
from ...language.tokens import (
    Token,
    finish,
    finite,
    first_verb,
    is_verb,
    quote_depths,
    strip,
    text_of,
    tokenize,
    verb_form,
)
from ...language.words import (
    ADVERBS,
    INDEFINITE,
    LOWER_FIRST,
    NAME_WORD,
    NEW_SENTENCE,
    NOT_SURNAMES,
    PERSON_NOUNS,
    QUOTES,
    RELATIONAL,
    REPORTING,
    SUBJECT_PRONOUNS,
    TIME_WORDS,
    TITLES,
)
from ...text import STOPWORDS


def person_head(tokens: list[Token]) -> bool:
    head = tokens[-1].lower
    return head in PERSON_NOUNS or (head.endswith(("man", "woman")) and len(head) > 5) or head == "old"


def names_in(tokens: list[Token]) -> list[str]:
    """Runs of two to four name-like words ("Charlie Adam", "Rory McIlroy") in the tokens."""
    runs, current = [], []
    for t in tokens + [Token("", 0, 0, -1)]:
        if NAME_WORD.match(t.text) and t.lower not in DETERMINERS and t.text not in NEW_SENTENCE:
            current.append(t)
            continue
        if 2 <= len(current) <= 4:
            runs.append(" ".join(x.text for x in current))
        current = []
    return runs


Replacement = tuple[int, int, str]  # the tokens [start, end) and the text they are replaced with


@dataclass
class Entities:
    """What a reference has named so far: full names (for "Adam" -> "Charlie Adam") and the last
    person named as a subject (for "he", "she", "the Welshman")."""

    names: list[str]
    person: str | None = None


def role_facts(tokens: list[Token], sentence: str, known: Entities) -> list[tuple[str, Replacement | None]]:
    """ "X is Y" facts of a role written before a name inside the sentence ("Stoke City ace Charlie
    Adam" -> "Charlie Adam is a Stoke City ace", "single mother Gina Michelle" -> "Gina Michelle is
    a single mother", "Liverpool striker Daniel Sturridge" at the sentence's start), each with the
    replacement that leaves the name alone in the sentence ("... trailing arm of Charlie Adam"),
    or None where the words around the role may belong to it ("Chelsea 's star X", quotations)."""

    facts: list[tuple[str, Replacement | None]] = []
    quoted = quote_depths(tokens)
    for i in range(1, len(tokens) - 1):
        t = tokens[i]
        if t.capitalised or t.lower not in PERSON_NOUNS or not NAME_WORD.match(tokens[i + 1].text):
            continue
        end = i + 1
        while end < len(tokens) and NAME_WORD.match(tokens[end].text) and end - i <= 3:
            end += 1
        start = role_start(tokens, i)
        if start > 0 and tokens[start - 1].lower in {"the", "a", "an"}:
            start -= 1  # "the Arsenal midfielder Jack Wilshere": "the" is the role's
        if unclear_role(tokens, start, i):
            continue
        name = " ".join(x.text for x in tokens[i + 1 : end])
        name = next((n for n in reversed(known.names) if n.endswith(" " + name)), name)
        fact = finish([name, "is", role_phrase(tokens[start : i + 1], sentence)])
        alone = not any(quoted[start:end]) and (start == 0 or stands_before_role(tokens, start - 1))
        facts.append((fact, (start, end, name) if alone else None))
    return facts


# Kin and partners: a bare "husband Tom" after a name's verb is that name's ("murdered husband Tom").
KIN = frozenset(
    ["wife", "husband", "mother", "father", "girlfriend", "boyfriend", "daughter", "son", "partner"]
    + ["brother", "sister", "fiancee", "fiancée", "grandson", "granddaughter", "twin"]
)


def kin_facts(tokens: list[Token], sentence: str) -> list[str]:
    """ "Catherine Nevin murdered husband Tom" -> "Tom is Catherine Nevin 's husband.": a bare kin
    noun ("husband", "daughter , Lola ,") and a name after the verb of a clause whose subject is a
    name, when no other person may own it: no word before the noun ("the husband", "her
    husband"), no name, pronoun or finite verb between the subject's verb and the noun ("Ann said
    Jane killed husband Tom"), no verb of saying, outside quotations."""
    verb = first_verb(tokens)
    if verb is None or not 2 <= verb <= 4 or not all(NAME_WORD.match(t.text) for t in tokens[:verb]):
        return []
    if tokens[verb].lower in REPORTING or any(t.text in QUOTES for t in tokens):
        return []
    owner = " ".join(t.text for t in tokens[:verb])
    out = []
    for i in range(verb + 1, len(tokens) - 1):
        between = tokens[verb + 1 : i]
        if any(t.capitalised or t.lower in SUBJECT_PRONOUNS or finite(tokens, t.index) for t in between):
            break
        if tokens[i].lower not in KIN or not (tokens[i - 1].lower in PREPOSITIONS or is_verb(tokens, i - 1)):
            continue
        span = kin_name(tokens, i)
        if span is not None:
            out.append(finish([text_of(tokens[span[0] : span[1]], sentence), "is", owner, "'s", tokens[i].lower]))
    return out


def kin_name(tokens: list[Token], i: int) -> tuple[int, int] | None:
    """The name right after the kin noun tokens[i] ("husband Tom", "daughter , Lola ,"), alone:
    not "son Tom 's teacher", not "husband Tom and Jane"."""
    start = i + 2 if tokens[i + 1].text == "," else i + 1
    end = start
    while end < len(tokens) and end - start < 3 and NAME_WORD.match(tokens[end].text):
        end += 1
    after = tokens[end].text if end < len(tokens) else ""
    if end == start or after.lower() in {"'s", "'", "and", "&"}:
        return None
    if start > i + 1 and after != ",":
        return None  # "daughter , Lola ," is set off by commas on both sides
    return start, end


def stands_before_role(tokens: list[Token], k: int) -> bool:
    """tokens[k], just before a role and its name, is no word the role may belong with: a
    preposition, a verb, "and" or a comma (not "Chelsea 's", not an adjective)."""
    return tokens[k].lower in PREPOSITIONS | {"and", ",", ":", ";"} or is_verb(tokens, k)


# Capitalised words that open a sentence without being part of a role: "Yesterday Chelsea star X".
OPENERS = frozenset(["yesterday", "today", "tonight", "now", "meanwhile", "however", "also", "then", "but", "and"])


def role_start(tokens: list[Token], i: int) -> int:
    """Where the role ending in the person noun tokens[i] starts: up to three words before it, names
    or plain lower-case words that are no verbs; the sentence's first word only when it is a name
    ("Liverpool striker"), not an opener ("Yesterday", "But")."""
    start = i
    while start > 0 and start > i - 3:
        before = tokens[start - 1]
        describes = (
            before.capitalised
            and NAME_WORD.match(before.text)
            and (start - 1 > 0 or leading_name(tokens))
            or before.text.isalpha()
            and not before.capitalised
            and before.lower not in STOPWORDS
            and not is_verb(tokens, start - 1)
        )
        if not describes:
            break
        start -= 1
    return start


def leading_name(tokens: list[Token]) -> bool:
    """The sentence's first word is a name, not a word any sentence may open with."""
    first = tokens[0]
    return (
        first.lower not in STOPWORDS | ADVERBS | TIME_WORDS | OPENERS | DETERMINERS
        and verb_form(first.lower) is None
        and bool(NAME_WORD.match(first.text))
    )


def unclear_role(tokens: list[Token], start: int, i: int) -> bool:
    """The words tokens[start:i+1] are no role that says who the name is."""
    if any(x.lower in TIME_WORDS for x in tokens[start:i]):
        return True  # "That same day mother Sandra Shemansky": a time, not a role
    if tokens[i].lower in RELATIONAL and start == i:
        return True  # "murdered husband Tom": "Tom is husband" says nothing of whose
    # "Yesterday One Direction star": where the name before the role starts is unclear
    return start > 0 and tokens[start].capitalised and tokens[start - 1].capitalised


def role_phrase(description: list[Token], sentence: str) -> str:
    """A role as the complement of "is": "Stoke City ace" -> "a Stoke City ace", "Former Barcelona
    man" -> "a former Barcelona man", "The 37-year - old" -> "the 37-year - old"."""
    words = text_of(description, sentence).split()
    first = description[0]
    if first.lower in DETERMINERS or first.lower in PERSON_NOUNS or first.lower in LOWER_FIRST:
        words[0] = words[0].lower()
    plural = description[-1].lower.endswith("s") and not description[-1].lower.endswith("ss")
    if first.lower not in DETERMINERS and not plural:
        words.insert(0, article(words[0]))
    return " ".join(words)


def article(word: str) -> str:
    """ "a" or "an" before the word, by its sound ("an ace", "a One Direction star", "a union")."""
    lower = word.lower()
    if lower.startswith(("one", "once", "uni", "use", "usu", "eu", "ukr")):
        return "a"
    return "an" if lower[0] in "aeiou" or lower.startswith(("hour", "honest", "heir")) else "a"


def informative_role(subject: list[Token]) -> bool:
    """A role that names one person of the reference: it says more than a bare role ("German boss",
    "Former Barcelona man", "The 62-year - old"), and is no role another person of the story
    plays ("Victim", "Her husband", "The suspect" are someone else as often as not)."""
    if subject[-1].lower in RELATIONAL:
        return False
    return any(t.lower not in DETERMINERS and t.lower not in PERSON_NOUNS for t in subject)


def resolve_references(sentence: str, known: Entities) -> tuple[str, list[str]]:
    """The sentence with its subject named (a pronoun, a role description or a surname replaced by
    the full name met before in the reference) and the "X is Y" facts this reveals ("German boss
    has enjoyed success" -> "Jurgen Klopp has enjoyed success", "Jurgen Klopp is German boss")."""
    tokens = tokenize(sentence)
    facts: list[str] = []
    replace: dict[int, tuple[int, str]] = {}  # start token -> (end token, text)
    verb = first_verb(tokens)
    subject = strip(tokens[:verb]) if verb else []
    while subject and subject[-1].lower in ADVERBS:
        subject = subject[:-1]
    for found in (subject_person(subject, sentence, known), titled_subject(subject, known)):
        if found is not None:
            (start, end, text), fact = found
            replace[start] = (end, text)
            facts.extend([fact] if fact else [])
    headline = headline_subject(tokens, sentence, known)
    if headline is not None:
        replace[0] = (1, headline)
    if len(tokens) > 3 and tokens[2].text == ":" and all(NAME_WORD.match(t.text) for t in tokens[:2]):
        replace[0] = (3, "")  # "Tim Stanley : Buhari won ...": the speaker's label goes
    replace.update(surnames(tokens, replace, known))
    for fact, span in role_facts(tokens, sentence, known):
        facts.append(fact)
        if span is not None:
            name_alone(replace, span)
    resolved = replaced(sentence, tokens, replace)
    remember(resolved, known)
    return resolved, facts


def name_alone(replace: dict[int, tuple[int, str]], span: Replacement) -> None:
    """The role before a name replaced by the name alone, unless another replacement crosses it
    (one inside it, a surname given its first name, is replaced with it)."""
    start, end, name = span
    inside = [a for a, (b, _) in replace.items() if start <= a and b <= end]
    if any(a < end and start < b for a, (b, _) in replace.items() if a not in inside):
        return
    for a in inside:
        del replace[a]
    replace[start] = (end, name)


def subject_person(subject: list[Token], sentence: str, known: Entities) -> tuple[Replacement, str | None] | None:
    """The person just named for a subject "he"/"she", or for an informative role ("German boss":
    with the fact "Jurgen Klopp is a German boss")."""
    if not subject or not known.person:
        return None
    first = subject[0]
    if len(subject) == 1 and first.lower in {"he", "she"}:
        return (0, 1, known.person), None
    owner = next((k for k, t in enumerate(subject) if t.lower == "'s"), None)
    if owner is not None and subject[owner - 1].lower == "old" and owner + 1 < len(subject):
        subject = subject[:owner]  # "The 37-year - old 's foundation": the age names the owner
    if (
        len(subject) <= 6
        and person_head(subject)
        and first.lower not in INDEFINITE | FRONT_SUBORDINATORS | PREPOSITIONS
        and (not first.number or subject[-1].lower == "old")
        and not any(t.text == "," or t.lower in {"and", "of", "'s"} for t in subject)
        and informative_role(subject)
    ):
        fact = finish([known.person, "is", role_phrase(subject, sentence)])
        return (subject[0].index, subject[-1].index + 1, known.person), fact
    return None


def titled_subject(subject: list[Token], known: Entities) -> tuple[Replacement, str] | None:
    """ "Midfielder Adam", "Candidate Lynne Abraham": the full name, with "X is a midfielder"."""
    if not (
        subject
        and subject[0].lower in PERSON_NOUNS
        and len(subject) >= 2
        and all(NAME_WORD.match(t.text) for t in subject[1:])
    ):
        return None
    name = " ".join(t.text for t in subject[1:])
    name = next((n for n in reversed(known.names) if n.endswith(" " + name)), name)
    if len(name.split()) < 2:
        return None
    return (subject[0].index, subject[-1].index + 1, name), finish([name, "is", "a", subject[0].lower])


def headline_subject(tokens: list[Token], sentence: str, known: Entities) -> str | None:
    """A headline without its subject ("Came up with idea ...", "Referred to ..."; not "Stand - out
    shows"): its first word with the person it is about before it."""
    if (
        known.person
        and len(tokens) > 2
        and verb_form(tokens[0].lower) in {"VBD", "VBN"}
        and (tokens[0].lower not in AUXILIARIES or tokens[0].lower in {"was", "is", "has", "had", "were"})
        and not tokens[1].capitalised
        and not is_verb(tokens, 1)
        and not any(tokens[0].text in n.split() for n in known.names)
        and not sentence.rstrip().endswith("?")
    ):
        return known.person + " " + tokens[0].lower
    return None


def surnames(tokens: list[Token], replace: dict[int, tuple[int, str]], known: Entities) -> dict[int, tuple[int, str]]:
    """A surname alone ("Adam", "Mr Carroll") outside what is replaced already gets its first name back."""
    found: dict[int, tuple[int, str]] = {}
    for t in tokens:
        if t.index in replace or any(a <= t.index < b for a, (b, _) in replace.items()):
            continue
        if not NAME_WORD.match(t.text):
            continue
        before = tokens[t.index - 1].text if t.index else ""
        after = tokens[t.index + 1].text if t.index + 1 < len(tokens) else ""
        titled = before in TITLES
        if (NAME_WORD.match(before) and not titled) or NAME_WORD.match(after) or t.text in NOT_SURNAMES:
            continue
        full = next((n for n in reversed(known.names) if n.endswith(" " + t.text) and n.split()[0] not in TITLES), None)
        if full:
            found[t.index - titled] = (t.index + 1, full)
    return found


def replaced(sentence: str, tokens: list[Token], replace: dict[int, tuple[int, str]]) -> str:
    """The sentence with each run of tokens [start, end) replaced by its text."""
    out, pos = [], 0
    for start in sorted(replace):
        end, text = replace[start]
        out.append(sentence[pos : tokens[start].start])
        out.append(text)
        pos = tokens[end - 1].end
    out.append(sentence[pos:])
    return "".join(out)


def remember(resolved: str, known: Entities) -> None:
    """What this sentence names: its full names, and its subject when that is a name (a pronoun,
    role or missing subject stands for the subject of the sentence just before only)."""
    new_tokens = tokenize(resolved)
    for name in names_in(new_tokens):
        if name not in known.names:
            known.names.append(name)
    v = first_verb(new_tokens)
    head = strip(new_tokens[:v]) if v and new_tokens[v - 1].text != "-" else []
    known.person = subject_name(head)


def subject_name(head: list[Token]) -> str | None:
    """The person a subject names: the subject itself when it is a short name ("Was stopped at
    airport": "Was" is no name), else the first name in it, when it names one person."""
    if (
        head
        and all(NAME_WORD.match(t.text) and t.text not in NEW_SENTENCE for t in head)
        and len(head) <= 4
        and not (len(head) == 1 and (head[0].lower in AUXILIARIES or verb_form(head[0].lower)))
    ):
        return " ".join(t.text for t in head)
    if head and head[0].lower not in SUBJECT_PRONOUNS:
        lead = names_in(head)
        if lead and not any(t.lower in {"and", "&"} for t in head):
            return lead[0]
    return None
