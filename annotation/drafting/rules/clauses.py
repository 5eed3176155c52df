"""Steps 1, 3 and 4: boilerplate, run-on sentences, and a sentence cut into clauses."""

from dataclasses import dataclass

from ...language.inflections import getAllLemmas, getInflection
from ...language.lexicon import (
    AUXILIARIES,
    COORDINATORS,
    DETERMINERS,
    FRONT_SUBORDINATORS,
    INTRANSITIVE,
    NOT_VERBS,
    PREPOSITIONS,
)
from ...language.tokens import (
    Token,
    be,
    finite,
    first_verb,
    is_past,
    is_verb,
    noun_phrase_before,
    quote_depths,
    strip,
    text_of,
    tokenize,
    verb_form,
)
from ...language.words import (
    ADVERBS,
    BE,
    BOILERPLATE,
    COLLECTIVE_VERBS,
    CONDITIONS,
    FURNITURE,
    NAME_WORD,
    NEW_SENTENCE,
    PAST,
    QUOTES,
    REPORTING,
    SPLIT_SUBORDINATORS,
    SUBJECT_PRONOUNS,
    TIME_SPANS,
)


@dataclass
class Clause:
    """A clause as tokens; `extra` (e.g. a fronted "after ..." phrase) is appended to its text."""

    tokens: list[Token]
    extra: list[Token] | None = None
    words: list[str] | None = None  # a clause made of new words (apposition: "X is Y")


def comma_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """(start, end) of each comma-delimited stretch after a comma: tokens[start:end], end at the
    next comma or the end."""
    commas = [i for i, t in enumerate(tokens) if t.text == ","]
    spans = []
    for k, c in enumerate(commas):
        end = commas[k + 1] if k + 1 < len(commas) else len(tokens)
        spans.append((c + 1, end))
    return spans


def role_then_name(inner: list[Token], antecedent: list[Token], before_verb: bool) -> bool:
    """ "A classmate , Christopher Plaskon , has been charged": a short role ("a"/"an"/"the" and
    lower-case words) and, set off by commas before the verb, the name of the one it is."""
    names = [x for x in inner if x.text != "."]
    return (
        before_verb
        and 2 <= len(names) <= 3
        and all(NAME_WORD.match(x.text) for x in names)
        and antecedent[0].lower in {"a", "an", "the"}
        and len(antecedent) <= 4
        and all(x.text.isalpha() and not x.capitalised for x in antecedent[1:])
    )


def relative_clause(
    inner: list[Token], antecedent: list[Token], sentence: str, plain: bool, closed_before_verb: bool
) -> Clause | None:
    """ ", who/which/whose ... ,": a clause with the antecedent as subject ("X 's ..." for
    "whose"), where the antecedent is plain and a ", which" stands before the main verb."""
    head, rest = inner[0], strip(inner[1:])
    if not plain or head.lower == "which" and not closed_before_verb:
        return None
    if head.lower == "whose" and first_verb(rest, 1) is not None:
        return Clause(tokens=[], words=[text_of(antecedent, sentence) + " 's", text_of(rest, sentence)])
    if first_verb(rest, 0) is not None:
        return Clause(tokens=antecedent + rest)
    return None


def apposition_entity(antecedent: list[Token], plain: bool) -> list[Token]:
    """What an apposition is said of: the last run of names of a named antecedent, a plain
    antecedent, else nothing ("the wife of John Smith , 34 ,": whose age is it?)."""
    if not antecedent[-1].capitalised:
        return antecedent if plain else []
    k = len(antecedent)
    while k > 0 and (antecedent[k - 1].capitalised or antecedent[k - 1].number):
        k -= 1
    if k > 0 and antecedent[k - 1].lower in PREPOSITIONS | {"'s", "'"}:
        return []
    return antecedent[k:]


def apposition(inner: list[Token], antecedent: list[Token], sentence: str, plain: bool, past: bool) -> Clause | None:
    """ ", the founder of Maiti Nepal ,", ", 34 ,", ", from West Linn ,": "X is Y" of a name (a
    noun phrase, a place or an age), or of a determined noun by a determined noun."""
    entity = apposition_entity(antecedent, plain)
    head = inner[0]
    nominal = head.lower in DETERMINERS or (
        head.capitalised and len(inner) >= 2 and not any(t.lower == "and" for t in inner)
    )
    place = head.lower in {"from", "of", "in"} and len(inner) >= 2
    age = len(inner) == 1 and head.number
    if entity and (
        (antecedent[-1].capitalised and (nominal or place or age))
        or (antecedent[0].lower in DETERMINERS and head.lower in DETERMINERS)
    ):
        return Clause(tokens=[], words=[text_of(entity, sentence), be(entity, past), text_of(strip(inner), sentence)])
    return None


def continues_name(inner: list[Token], clause: Clause) -> bool:
    """A run of names after an apposition of names continues it ("from West Linn , Oregon")."""
    return all(t.capitalised for t in inner) and bool(clause.words)


def named_role(inner: list[Token], antecedent: list[Token], sentence: str, past: bool) -> Clause:
    """ "Christopher Plaskon is a classmate" of "A classmate , Christopher Plaskon ,"."""
    role = text_of(antecedent, sentence)
    return Clause(tokens=[], words=[text_of(inner, sentence), be(inner, past), role[0].lower() + role[1:]])


def insert_clause(
    inner: list[Token],
    antecedent: list[Token],
    sentence: str,
    past: bool,
    closed: bool,
    before_verb: bool,
    after_verb: bool,
) -> Clause | None:
    """The clause of a relative clause or an apposition set off by commas, or None."""
    # the word a clause or apposition modifies must be plain: "the wife of the judge , who ..."
    # could be either ("The judge was ..." would be a guess), and ", which" after the main
    # verb may speak of the whole clause ("won the title , which surprised ...")
    plain = not any(t.lower in PREPOSITIONS | {"'s", "and", "'"} for t in antecedent[1:])
    if inner[0].lower in {"who", "which", "whose"} and len(inner) > 2:
        return relative_clause(inner, antecedent, sentence, plain, closed and before_verb)
    if first_verb(inner, 0) is None and (closed and before_verb or after_verb and not closed):
        return apposition(inner, antecedent, sentence, plain, past)
    return None


def extract_inserts(tokens: list[Token], sentence: str) -> tuple[list[Token], list[Clause]]:
    """Relative clauses and appositions set off by commas: removed from the main clause and
    returned as clauses of their own with the antecedent as subject.

    "Koirala , the founder of Maiti Nepal ," gives "Koirala is the founder of Maiti Nepal";
    "Eva Chapin , 34 , from West Linn , Oregon ," gives "Eva Chapin is 34" and "Eva Chapin is
    from West Linn , Oregon" (a name right after an apposition continues it)."""
    removed: set[int] = set()
    clauses: list[Clause] = []
    main_verb = first_verb(tokens)
    past = is_past(tokens)
    previous: tuple[int, list[Token], Clause] | None = None  # (end, antecedent, clause) of the last insert
    for start, end in comma_spans(tokens):
        if start >= end or removed.intersection(range(start, end)):
            continue
        inner = tokens[start:end]
        closed = end < len(tokens)
        follows_insert = previous is not None and previous[0] == start - 1
        antecedent = previous[1] if follows_insert else noun_phrase_before(tokens, start - 1)
        if not antecedent:
            continue
        before_verb = main_verb is not None and end <= main_verb
        after_verb = main_verb is not None and main_verb < start
        span = range(start - 1, end + 1 if closed else end)  # the insert with its commas
        if follows_insert and continues_name(inner, previous[2]):
            previous[2].words[-1] += " , " + text_of(inner, sentence)  # "West Linn , Oregon"
            removed.update(span)
            previous = (end, antecedent, previous[2])
            continue
        if closed and not follows_insert and role_then_name(inner, antecedent, before_verb):
            clauses.append(named_role(inner, antecedent, sentence, past))  # the name is the subject
            removed.update(range(tokens.index(antecedent[0]), start))
            removed.add(end)
            previous = None
            continue
        clause = insert_clause(inner, antecedent, sentence, past, closed, before_verb, after_verb)
        if clause is None:
            previous = None
            continue
        clauses.append(clause)
        removed.update(span)
        previous = (end, antecedent, clause)
    return [t for i, t in enumerate(tokens) if i not in removed], clauses


def passive_group(group: list[Token]) -> bool:
    """A verb group that is "be" + a past participle ("was arrested", "is handcuffed")."""
    words = [t.lower for t in group if t.lower not in ADVERBS | {"not", "n't"}]
    return len(words) >= 2 and words[0] in BE and verb_form(words[-1]) in {"VBD", "VBN"}


def group_end(tokens: list[Token], verb: int) -> int:
    """The end of the verb group starting at tokens[verb] (verbs, adverbs, "not")."""
    group = verb
    while group < len(tokens) and (is_verb(tokens, group) or tokens[group].lower in ADVERBS | {"not", "n't"}):
        group += 1
    return group


def embeds_clause(tokens: list[Token], group: int) -> bool:
    """A finite verb or "that"/"who"/"which" after the verb group: the clause holds a clause of its own."""
    return any(finite(tokens, k) or tokens[k].lower in {"that", "who", "which"} for k in range(group, len(tokens)))


def split_shared_subject(
    tokens: list[Token], verb: int, left: list[Token], right: list[Token], right_verb: int, coordinator: str
) -> list[list[Token]]:
    """ "X did A and did B": B shares the subject of A (the right side starts with its verb)."""
    if verb > 1 and verb_form(left[0].lower) in {"VBD", "VBN"} and left[0].lower not in NOT_VERBS:
        return [tokens]  # "Tried again using ... and had twins": no subject to share
    word = right[right_verb].lower
    to = [k for k in range(verb, len(left) - 1) if left[k].lower == "to" and is_verb(left, k + 1)]
    base = word not in AUXILIARIES and verb_form(word) is None
    if to and base and coordinator == "and":
        return [left] + split_coordination(left[: to[-1] + 1] + right)  # "hopes to build A and take B"
    group = group_end(left, verb)
    if embeds_clause(left, group):
        return [tokens]
    reading = None
    if passive_group(left[verb:group]) and word not in AUXILIARIES and verb_form(word) in {"VBD", "VBN"}:
        reading = participle_reading(right, right_verb)
        if reading is None:
            return [tokens]  # "was arrested and charged with ...": "charged" may need the "was"
    if reading == "passive":  # "is handcuffed and blindfolded": "Man is blindfolded."
        right = [t for t in left[verb:group] if t.lower in AUXILIARIES] + right
    elif not finite(right, right_verb):
        return [tokens]
    return [left] + split_coordination(left[:verb] + right)


def participle_reading(right: list[Token], k: int) -> str | None:
    """After a passive verb group and "and", whether the past form right[k] is active ("were left
    homeless and met in a park", "... and had twins") or passive like the left side ("is
    handcuffed and blindfolded", "was arrested and given bail"); None when either may be meant
    ("was arrested and charged with murder" may be "charged" by the police or charging someone)."""
    word = right[k].lower
    tags = past_tags(word)
    nxt = right[k + 1] if k + 1 < len(right) else None
    if nxt is not None and nxt.lower == "by" and "VBN" in tags:
        return "passive"  # "was booed and met by protesters": an agent
    if tags == {"VBD"} or lemma_of(word) in COLLECTIVE_VERBS | INTRANSITIVE:
        return "active"
    if nxt is not None and nxt.lower in {"the", "a", "an", "his", "her", "their", "him", "them", "its"}:
        return "active" if "VBD" in tags else None
    if tags == {"VBN"}:
        return "passive"
    if nxt is None or nxt.lower in SPLIT_SUBORDINATORS and first_verb(right[k + 2 :], 0) is not None:
        return "passive"  # "Man is handcuffed and blindfolded as he is led ...": nothing else it may take
    return None


def lemma_of(word: str) -> str:
    return (getAllLemmas(word, "VERB").get("VERB") or (word,))[0]


def past_tags(word: str) -> set[str]:
    """Which of the past tags (VBD, VBN) the word is ("met": both, "went": VBD, "given": VBN)."""
    lemma = lemma_of(word)
    return {tag for tag in ("VBD", "VBN") if word in getInflection(lemma, tag)}


def own_clause(left: list[Token], right: list[Token], lead: list[Token], right_verb: int) -> bool:
    """The right side of "and"/"but" is a clause with a subject of its own ("phones and tablets that
    only do n't last": no clause; "says her and husband David felt": no)."""
    return (
        right_verb <= 6
        and not any(t.lower in PREPOSITIONS for t in lead[:1])
        and not any(t.lower in {"that", "which", "who"} or t.lower in SUBJECT_PRONOUNS for t in lead[1:])
        and left[-1].lower not in DETERMINERS | {"her", "his", "their", "its", "my", "our", "your"}
        and finite(right, right_verb)
    )


def split_coordination(tokens: list[Token]) -> list[list[Token]]:
    """Split at "and"/"but" (with or without a comma) where the right side has its own finite verb.

    When the right side starts with the verb (possibly after an adverb) it shares the left
    side's subject, which is repeated; only when the left side has no clause of its own after
    its verb ("rules that the hedge can stay - but must be cut": who must be cut?), and never
    inside a condition ("if A and B")."""
    verb = first_verb(tokens)
    if verb is None:
        return [tokens]
    for i in range(verb + 1, len(tokens) - 1):
        if tokens[i].lower in CONDITIONS:
            return [tokens]
        if tokens[i].lower not in COORDINATORS:
            continue
        right = strip(tokens[i + 1 :])
        right_verb = first_verb(right, 0) if right else None
        if right_verb is None:
            continue
        left = strip(tokens[:i])
        if tokens[verb].lower in REPORTING and tokens[i].lower == "and" and one_report(left, verb, right):
            # "says she fell and that it never happened before": two things said, each with its speaker
            return [left] + split_coordination(tokens[: verb + 1] + right[1:])
        if tokens[verb].lower in REPORTING or any(t.lower == "between" for t in left):
            return [tokens]  # "say there are differences between the gun and Taser used": inside the report
        lead = [t for t in right[:right_verb] if t.lower not in ADVERBS]
        if not lead:
            return split_shared_subject(tokens, verb, left, right, right_verb, tokens[i].lower)
        if own_clause(left, right, lead, right_verb):
            return [left] + split_coordination(right)
    return [tokens]


def one_report(left: list[Token], verb: int, right: list[Token]) -> bool:
    """ "says she fell and that ...": the left side reports one clause (one finite verb, no other
    "that"), so the "that" on the right can only be the verb of saying's ("says he knows that A
    and that B" is not "says B")."""
    inner = range(verb + 1, len(left))
    return (
        right[0].lower == "that"
        and sum(finite(left, k) for k in inner) == 1
        and not any(left[k].lower == "that" for k in inner if k > verb + 1)
    )


def subordinate_clause(tokens: list[Token]) -> int | None:
    """Where tokens[0] opens a subordinate clause with a subject and a finite verb of its own
    ("because it blocked light", "as prices fell", "when engine exploded"): the index of that
    verb, else None ("because of aftershocks", "as well", "after storms" are phrases)."""
    if len(tokens) < 3 or tokens[0].lower not in SPLIT_SUBORDINATORS or tokens[1].lower in PREPOSITIONS | {"well"}:
        return None
    rest = tokens[1:]
    v = first_verb(rest, 1)
    if v is None or v > 6 or not finite(rest, v) or any(t.text in {",", ";"} or t.text in QUOTES for t in rest[:v]):
        return None
    if any(t.lower in SUBJECT_PRONOUNS or t.lower in COORDINATORS for t in rest[1:v]):
        return None  # "after claims he had ...", "after storms and met ...": no subject
    return v + 1


def split_subordinate(tokens: list[Token]) -> list[list[Token]]:
    """A clause with a trailing subordinate clause whose content is stated ("Sales rose 5% as
    prices fell"): the main clause and the subordinate clause, each with its own subject ("Sales
    rose 5%.", "Prices fell."). Not where the main clause reports or embeds ("said he left because
    he was ill": the reason is his), and "when" only in the past."""
    verb = first_verb(tokens)
    if verb is None or verb == 0:
        return [tokens]
    quoted = quote_depths(tokens)
    group = group_end(tokens, verb)
    for s in range(group, len(tokens) - 2):
        if quoted[s] or tokens[s].lower not in SPLIT_SUBORDINATORS or tokens[s - 1].lower in {"as", "so", "such"}:
            continue
        if tokens[s - 1].lower in TIME_SPANS:
            return [tokens]  # "just moments after he walked over it": one time phrase
        v = subordinate_clause(tokens[s:])
        if v is None:
            continue
        main = strip(tokens[:s])
        speaker = reported_by(main, group) if embeds_clause(main, group) else []
        if speaker is None:
            return [tokens]
        if tokens[s].lower == "when" and not (is_past(main) and is_past(tokens[s + 1 :])):
            return [tokens]
        if sum(x.text in QUOTES for x in main) % 2:
            return [tokens]
        return [main] + split_subordinate(speaker + strip(tokens[s + 1 :]))
    return [tokens]


# Verbs of saying whose report a reason or time clause cannot be lifted from: what is denied or
# doubted is the whole ("denied she left after he arrived" does not deny that he arrived).
NEGATIVE_REPORTS = frozenset(["deny", "denies", "denied", "doubt", "doubts", "doubted", "dispute", "disputes"])


def reported_by(main: list[Token], group: int) -> list[Token] | None:
    """The speaker and verb of saying ("Victim has said") when `main` is a report of one plain
    clause ("her family may be forced to move"), so a subordinate clause after it is reported
    too: "as they do n't feel safe" -> "Victim has said they do n't feel safe."; None otherwise
    (another clause inside, a negation whose scope may hold the subordinate clause, a verb of
    denying, a quotation)."""
    verb = main[group - 1].lower
    if verb not in REPORTING or verb in NEGATIVE_REPORTS or any(t.text in QUOTES for t in main):
        return None
    start = group + 1 if group < len(main) and main[group].lower == "that" else group
    report = main[start:]
    inner = first_verb(report, 1)
    if inner is None or inner > 4 or any(t.text in {",", ";", ":"} for t in report[:inner]):
        return None
    if any(t.lower in {"not", "n't", "never", "no"} for t in report):
        return None
    groups = sum(finite(report, k) and not is_verb(report, k - 1) for k in range(1, len(report)))
    return main[:group] if groups == 1 else None


def semicolon_segments(tokens: list[Token]) -> list[list[Token]]:
    """The tokens cut at each ";" (not one before a quotation: "Christie said ; ' I 've got ...'"
    keeps its speaker), each stripped, empty ones left out."""
    segments: list[list[Token]] = [[]]
    for k, t in enumerate(tokens):
        quote_next = k + 1 < len(tokens) and tokens[k + 1].text in QUOTES
        if t.text == ";" and not quote_next:
            segments.append([])
        else:
            segments[-1].append(t)
    return [segment for segment in (strip(s) for s in segments) if segment]


def fronted_phrase(segment: list[Token]) -> tuple[list[Token] | None, list[Token]]:
    """A fronted subordinate phrase ("After winning the title , he ..."): (the phrase, the clause
    after its comma); (None, the segment) when there is none."""
    if segment[0].lower in FRONT_SUBORDINATORS and segment[1:2] and segment[1].lower != "of":
        comma = next((i for i, t in enumerate(segment) if t.text == ","), None)
        quoted = any(t.text in QUOTES for t in segment[: comma or 0])
        if comma is not None and not quoted and first_verb(segment[comma + 1 :], 1) is not None:
            return segment[:comma], strip(segment[comma + 1 :])
    return None, segment


def split_clauses(sentence: str) -> list[Clause]:
    """The sentence's clauses, each to be drafted on its own (see the module docstring)."""
    clauses: list[Clause] = []
    for segment in semicolon_segments(strip(tokenize(sentence))):
        extra, segment = fronted_phrase(segment)
        if extra is not None and subordinate_clause(extra) is not None:  # "While a doctor kept her from ...": stated
            clauses.append(Clause(tokens=strip(extra[1:])))
            extra = None
        main, inserts = extract_inserts(segment, sentence)
        parts = [p for c in split_coordination(strip(main)) for p in split_subordinate(c)]
        for k, part in enumerate(parts):
            clauses.append(Clause(tokens=part, extra=extra if k == 0 else None))
        clauses.extend(inserts)
    return clauses


def is_boilerplate(sentence: str) -> bool:
    """A reference sentence the guidelines leave out ("CLICK HERE for all the latest Chelsea
    news.", "Scroll down for video"): page furniture, not a fact of the summary."""
    return bool(BOILERPLATE.search(sentence))


def without_furniture(sentence: str) -> str:
    """The sentence less the page-furniture labels that open it ("READ : It wo n't be long
    before ..." -> "It wo n't be long before ..."; "VIDEO : ..."); "" when the sentence is
    boilerplate ("READ MORE : ...") or nothing but furniture is left ("READ :", "VIDEO : Scroll
    down for video"). Only known labels followed by a colon at the start: "Attorney : Bates assumed
    ..." stays as it is."""
    if is_boilerplate(sentence):
        return ""
    rest = FURNITURE.sub("", sentence, count=1)
    return "" if is_boilerplate(rest) or not any(c.isalnum() for c in rest) else rest


def comma_splice(tokens: list[Token], start: int, i: int) -> bool:
    """A comma splice at tokens[i]: ", Bobby Zamora made it three" (names, then a past verb) after
    a clause of its own from tokens[start] (not a fronted "When asked ... , Christie said")."""
    if tokens[i - 1].text != "," or not NAME_WORD.match(tokens[i].text) or tokens[i].text in NEW_SENTENCE:
        return False
    k = i
    while k < len(tokens) and NAME_WORD.match(tokens[k].text) and k - i < 3:
        k += 1
    spliced = k < len(tokens) and (verb_form(tokens[k].lower) == "VBD" or tokens[k].lower in PAST)
    fronted = tokens[start].lower in FRONT_SUBORDINATORS
    return spliced and not fronted and first_verb(tokens[start : i - 1], 1) is not None


def split_run_on(sentence: str) -> list[str]:
    """A run-on sentence cut where a new sentence starts without punctuation: after a closing
    quote followed by a capitalised word ("... ' bleeding ' East of England ambulance service
    warned ..."), or at a capitalised "The"/"He"/"She"... right after a word ("... last year The
    Welshman ..."), when both sides have a verb of their own."""
    tokens = tokenize(sentence)
    quoted = quote_depths(tokens)
    cuts = [0]
    for i in range(2, len(tokens) - 2):
        t, before = tokens[i], tokens[i - 1]
        closing = before.text in QUOTES and quoted[i] == 0 and t.capitalised
        if not quoted[i] and comma_splice(tokens, cuts[-1], i):
            cuts.append(i)
            continue
        fresh = t.text in NEW_SENTENCE and before.text.isalnum() and before.lower not in DETERMINERS | PREPOSITIONS
        if not (closing or fresh) or tokens[i - 2].text in {":", ","}:
            continue
        left, right = tokens[cuts[-1] : i], tokens[i:]
        if first_verb(left, 1) is not None and first_verb(right, 1) is not None and len(right) >= 3:
            cuts.append(i)
    if len(cuts) == 1:
        return [sentence]
    bounds = cuts + [len(tokens)]
    return [sentence[tokens[a].start : tokens[b - 1].end] for a, b in zip(bounds, bounds[1:], strict=False)]
