"""The `parsed` drafter's transformations on parses built by hand (no model), including the
sentences they must leave whole; one slow test with the installed spaCy model."""

import sys

import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from annotation.drafting.parsed import draft_parsed_reference, draft_parsed_sentence
from annotation.drafting.parsed.clauses import simple_sentences
from annotation.drafting.rules import draft_sentence

VOCAB = Vocab()


def parse(rows: str) -> Doc:
    """A Doc from lines "word head dep pos tag" (head: the head word's position, its own for ROOT)."""
    table = [line.split() for line in rows.strip().splitlines()]
    return Doc(
        VOCAB,
        words=[r[0] for r in table],
        heads=[int(r[1]) for r in table],
        deps=[r[2] for r in table],
        pos=[r[3] for r in table],
        tags=[r[4] for r in table],
    )


def text(doc: Doc) -> str:
    return doc.text


MINISTER = """
The 1 det DET DT
minister 9 nsubj NOUN NN
, 1 punct PUNCT ,
who 5 nsubjpass PRON WP
was 5 auxpass AUX VBD
sacked 1 relcl VERB VBN
in 5 prep ADP IN
2019 6 pobj NUM CD
, 1 punct PUNCT ,
praised 9 ROOT VERB VBD
the 11 det DET DT
judge 9 dobj NOUN NN
. 9 punct PUNCT .
"""

SALES = """
Sales 1 nsubj NOUN NNS
rose 1 ROOT VERB VBD
5 3 nummod NUM CD
% 1 dobj NOUN NN
as 6 mark SCONJ IN
prices 6 nsubj NOUN NNS
fell 1 advcl VERB VBD
. 1 punct PUNCT .
"""

PRESSURED = """
He 1 nsubj PRON PRP
pressured 1 ROOT VERB VBD
officials 1 dobj NOUN NNS
to 4 aux PART TO
change 1 xcomp VERB VB
the 6 det DET DT
rating 4 dobj NOUN NN
. 1 punct PUNCT .
"""

ARRESTED = """
He 2 nsubjpass PRON PRP
was 2 auxpass AUX VBD
arrested 2 ROOT VERB VBN
and 2 cc CCONJ CC
charged 2 conj VERB VBN
with 4 prep ADP IN
murder 5 pobj NOUN NN
. 2 punct PUNCT .
"""

CARROLL = """
Ronnie 1 compound PROPN NNP
Carroll 6 nsubj PROPN NNP
, 1 punct PUNCT ,
a 4 det DET DT
singer 1 appos NOUN NN
, 1 punct PUNCT ,
died 6 ROOT VERB VBD
in 6 prep ADP IN
London 7 pobj PROPN NNP
. 6 punct PUNCT .
"""


def test_a_relative_clause_goes_with_the_noun_it_modifies():
    # the first unfaithful pattern: never "The judge was sacked in 2019"
    assert simple_sentences(parse(MINISTER)) == ["The minister praised the judge", "The minister was sacked in 2019"]
    drafts = draft_parsed_sentence(text(parse(MINISTER)), parse(MINISTER))
    assert "The minister was sacked in 2019." in drafts
    assert not any("judge was" in d for d in drafts)


def test_an_adverbial_clause_and_an_infinitive_stay_with_their_verb():
    # "Sales rose 5% as prices fell" never gives "Prices rose 5%"; "pressured officials to change
    # the rating" never "He changed the rating": the parse splits nothing, the rules draft it
    for rows in (SALES, PRESSURED):
        doc = parse(rows)
        assert simple_sentences(doc) is None
        assert draft_parsed_sentence(doc.text, doc) == draft_sentence(doc.text)


def test_conjoined_verbs_share_the_subject_and_the_auxiliary():
    assert simple_sentences(parse(ARRESTED)) == ["He was arrested", "He was charged with murder"]


def test_a_conjoined_clause_keeps_its_own_subject():
    doc = parse("""
Chelsea 1 nsubj PROPN NNP
won 1 ROOT VERB VBD
and 1 cc CCONJ CC
Hazard 4 nsubj PROPN NNP
scored 1 conj VERB VBD
twice 4 advmod ADV RB
. 1 punct PUNCT .
""")
    assert simple_sentences(doc) == ["Chelsea won", "Hazard scored twice"]


def test_an_apposition_of_a_name_is_an_is_a_fact():
    assert simple_sentences(parse(CARROLL)) == ["Ronnie Carroll died in London", "Ronnie Carroll is a singer"]


def test_a_shared_object_a_fronted_adjunct_and_a_late_modifier_keep_the_verbs_together():
    shared_object = """
He 1 nsubj PRON PRP
bought 1 ROOT VERB VBD
and 1 cc CCONJ CC
sold 1 conj VERB VBD
shares 3 dobj NOUN NNS
. 1 punct PUNCT .
"""
    fronted = """
On 3 prep ADP IN
Tuesday 0 pobj PROPN NNP
he 3 nsubj PRON PRP
won 3 ROOT VERB VBD
and 3 cc CCONJ CC
celebrated 3 conj VERB VBD
. 3 punct PUNCT .
"""
    late = """
He 1 nsubj PRON PRP
won 1 ROOT VERB VBD
and 1 cc CCONJ CC
celebrated 1 conj VERB VBD
on 1 prep ADP IN
Tuesday 4 pobj PROPN NNP
. 1 punct PUNCT .
"""
    negated = """
He 3 nsubjpass PRON PRP
was 3 auxpass AUX VBD
not 3 neg PART RB
arrested 3 ROOT VERB VBN
and 3 cc CCONJ CC
charged 3 conj VERB VBN
. 3 punct PUNCT .
"""
    alternative = ARRESTED.replace("and 2 cc CCONJ CC", "or 2 cc CCONJ CC")  # "arrested or charged": neither is stated
    for rows in (shared_object, fronted, late, negated, alternative):
        assert simple_sentences(parse(rows)) is None, rows


def test_nothing_is_split_inside_or_around_a_quotation():
    doc = parse("""
He 1 nsubj PRON PRP
laughed 1 ROOT VERB VBD
and 1 cc CCONJ CC
called 1 conj VERB VBD
it 3 dobj PRON PRP
" 7 punct PUNCT ``
a 7 det DET DT
joke 3 oprd NOUN NN
" 7 punct PUNCT ''
. 1 punct PUNCT .
""")
    assert simple_sentences(doc) is None
    quoted_relative = parse("""
The 1 det DET DT
minister 11 nsubj NOUN NN
, 1 punct PUNCT ,
who 6 nsubjpass PRON WP
was 6 auxpass AUX VBD
" 6 punct PUNCT ``
sacked 1 relcl VERB VBN
" 6 punct PUNCT ''
in 6 prep ADP IN
2019 8 pobj NUM CD
, 1 punct PUNCT ,
praised 11 ROOT VERB VBD
the 13 det DET DT
judge 11 dobj NOUN NN
. 11 punct PUNCT .
""")
    assert simple_sentences(quoted_relative) is None


def test_a_restrictive_relative_clause_and_a_number_apposition_stay():
    restrictive = parse(MINISTER.replace(", 1 punct PUNCT ,\nwho", "that 5 nsubjpass PRON WDT\nwho", 1))
    assert "minister was sacked" not in " ".join(simple_sentences(restrictive) or [])
    age = parse(
        CARROLL.replace("a 4 det DET DT", "aged 4 amod ADJ JJ").replace("singer 1 appos NOUN NN", "80 1 appos NUM CD")
    )
    assert simple_sentences(age) is None


def test_the_reference_carries_names_into_the_parsed_sentences():
    first = "Ronnie Carroll died in London ."
    doc = parse(ARRESTED)
    docs = {}

    def nlp(sentence):  # the resolved sentence is parsed: "He" is Ronnie Carroll there
        words = sentence.split()
        if words[0] == "Ronnie" and "arrested" in words:
            rows = ARRESTED.strip().splitlines()
            table = [["Ronnie", "1", "compound", "PROPN", "NNP"]] + [
                [r.split()[0], str(int(r.split()[1]) + 1), *r.split()[2:]] for r in rows
            ]
            table[1][0], table[1][2], table[1][3], table[1][4] = "Carroll", "nsubjpass", "PROPN", "NNP"
            docs[sentence] = Doc(
                VOCAB,
                words=[r[0] for r in table],
                heads=[int(r[1]) for r in table],
                deps=[r[2] for r in table],
                pos=[r[3] for r in table],
                tags=[r[4] for r in table],
            )
            return docs[sentence]
        return doc if words[0] == "He" else parse("x 0 ROOT X XX")

    class Parser:  # what the drafter asks of a spaCy pipeline: one parse, or a batch
        __call__ = staticmethod(nlp)

        def pipe(self, texts):
            return (nlp(t) for t in texts)

    drafts = draft_parsed_reference([first, doc.text], Parser())
    assert "Ronnie Carroll was charged with murder." in drafts[1]
    assert "Ronnie Carroll was arrested." in drafts[1]


@pytest.mark.slow
def test_the_installed_model_splits_and_leaves_alone():
    from annotation.drafting.parsed import load_parser

    nlp = load_parser()
    drafts = draft_parsed_reference(
        [
            "The minister , who was sacked in 2019 , praised the judge .",
            "Sales rose 5 % as prices fell .",
            "He pressured officials to change the rating .",
        ],
        nlp,
    )
    assert "The minister was sacked in 2019." in drafts[0]
    assert not any("judge was" in d for d in drafts[0])
    assert not any(d.startswith("Prices rose") for d in drafts[1])
    assert "He changed the rating." not in drafts[2]


def test_the_model_comes_from_the_setting_and_a_missing_one_is_a_clear_error(settings, tmp_path):
    from annotation.drafting import DrafterError, available_drafters, get_drafter

    settings.DRAFTER_PARSER_MODEL = str(tmp_path / "no-model-here")
    with pytest.raises(DrafterError, match="could not be loaded.*DRAFTER_PARSER_MODEL"):
        get_drafter("parsed").draft(["Ronnie Carroll died in London ."])
    assert "parsed" not in available_drafters()  # not offered where it cannot load
    settings.DRAFTER_PARSER_MODEL = "no_such_spacy_package"
    assert "parsed" not in available_drafters()
    settings.DRAFTER_PARSER_MODEL = str(tmp_path)  # a directory the user names: offered, loaded when asked
    assert "parsed" in available_drafters()


def test_without_spacy_the_parsed_drafter_is_not_offered_and_says_what_to_install(settings, monkeypatch):
    from annotation.drafting import DrafterError, available_drafters, get_drafter

    monkeypatch.setitem(sys.modules, "spacy", None)  # as if requirements-ml.txt were not installed
    assert available_drafters()[0] == "rules" and "parsed" not in available_drafters()
    settings.DRAFTER_PARSER_MODEL = "a_model_not_loaded_before"  # load_parser caches what it loaded
    with pytest.raises(DrafterError, match="install requirements-ml.txt"):
        get_drafter("parsed").draft(["Ronnie Carroll died in London ."])


def test_two_objects_joined_by_and_give_a_clause_each():
    doc = parse("""
One 1 nsubj NUM CD
caused 1 ROOT VERB VBD
boils 1 dobj NOUN NNS
and 2 cc CCONJ CC
spots 2 conj NOUN NNS
. 1 punct PUNCT .
""")
    assert simple_sentences(doc) == ["One caused boils", "One caused spots"]


def test_a_coordination_that_may_be_one_thing_or_share_a_modifier_stays():
    inside_a_noun_phrase = """
He 2 nsubjpass PRON PRP
is 2 auxpass AUX VBZ
surrounded 2 ROOT VERB VBN
by 2 agent ADP IN
men 3 pobj NOUN NNS
with 4 prep ADP IN
guns 5 pobj NOUN NNS
and 6 cc CCONJ CC
executioner 6 conj NOUN NN
. 2 punct PUNCT .
"""
    two_names = """
He 1 nsubj PRON PRP
ran 1 ROOT VERB VBD
for 1 prep ADP IN
Hampstead 2 pobj PROPN NNP
and 3 cc CCONJ CC
Kilburn 3 conj PROPN NNP
. 1 punct PUNCT .
"""
    shared_possessive = """
She 1 nsubj PRON PRP
insulted 1 ROOT VERB VBD
her 3 poss PRON PRP$
looks 1 dobj NOUN NNS
and 3 cc CCONJ CC
social 6 amod ADJ JJ
status 3 conj NOUN NN
. 1 punct PUNCT .
"""
    together = """
They 1 nsubj PRON PRP
mixed 1 ROOT VERB VBD
sugar 1 dobj NOUN NN
and 2 cc CCONJ CC
salt 2 conj NOUN NN
. 1 punct PUNCT .
"""
    for rows in (inside_a_noun_phrase, two_names, shared_possessive, together):
        assert simple_sentences(parse(rows)) is None, rows


ESPN = """
ESPN 1 nsubj PROPN NNP
suspended 1 ROOT VERB VBD
the 3 det DET DT
reporter 1 dobj NOUN NN
on 1 prep ADP IN
Friday 4 pobj PROPN NNP
amid 1 prep ADP IN
investigation 6 pobj NOUN NN
. 1 punct PUNCT .
"""


def test_two_adjuncts_give_the_core_with_each_never_the_core_alone():
    assert simple_sentences(parse(ESPN)) == [
        "ESPN suspended the reporter on Friday",
        "ESPN suspended the reporter amid investigation",
    ]


def test_adjuncts_stay_together_under_a_focus_word_or_beside_a_possible_argument():
    only = """
Rose 3 nsubjpass PROPN NNP
was 3 auxpass AUX VBD
only 3 advmod ADV RB
bettered 3 ROOT VERB VBN
six 5 nummod NUM CD
times 3 npadvmod NOUN NNS
at 3 prep ADP IN
Augusta 6 pobj PROPN NNP
in 3 prep ADP IN
April 8 pobj PROPN NNP
. 3 punct PUNCT .
"""
    argument = ESPN.replace("amid 1 prep ADP IN", "to 1 prep ADP IN").replace("investigation 6", "Leeds 6")
    for rows in (only, argument):
        assert simple_sentences(parse(rows)) is None, rows


def test_a_copula_keeps_its_prepositional_phrases_together():
    # "on death row" is what "been" says, not an adjunct: split, "Tom has been since 2012." is no sentence
    death_row = """
Tom 2 nsubj PROPN NNP
has 2 aux AUX VBZ
been 2 ROOT AUX VBN
on 2 prep ADP IN
death 5 compound NOUN NN
row 3 pobj NOUN NN
in 2 prep ADP IN
Bali 6 pobj PROPN NNP
since 2 prep ADP IN
2012 8 pobj NUM CD
. 2 punct PUNCT .
"""
    assert simple_sentences(parse(death_row)) is None
    # the same phrases after a verb that is not "be" are adjuncts, each with the core
    jailed = death_row.replace("been 2 ROOT AUX VBN", "sat 2 ROOT VERB VBN").replace(
        "has 2 aux AUX VBZ", "has 2 aux AUX VBZ"
    )
    assert simple_sentences(parse(jailed)) == [
        "Tom has sat on death row",
        "Tom has sat in Bali",
        "Tom has sat since 2012",
    ]
