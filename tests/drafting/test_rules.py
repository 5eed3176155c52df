"""The rule-based drafter as pure functions: clauses, coordination, relative clauses,
appositions; names and numbers kept whole."""

import pytest

from annotation.drafting import get_drafter
from annotation.drafting.rules import draft_sentence, first_verb, split_clauses, tokenize


def test_coordinated_subject_of_names_and_numbers_gives_one_acu_each_with_agreement():
    assert draft_sentence("Anuradha Koirala and 425 young women and girls have been sleeping outdoors .") == [
        "Anuradha Koirala has been sleeping outdoors.",
        "425 young women and girls have been sleeping outdoors.",
    ]


def test_but_splits_two_clauses_and_object_pair_splits():
    # a single adjunct stays in its clause (issue 44: no "Most were harmless." beside it)
    assert draft_sentence("Most were harmless on the money , but one caused boils and spots .") == [
        "Most were harmless on the money.",
        "One caused boils.",
        "One caused spots.",
    ]


def test_verb_phrase_coordination_keeps_the_subject():
    # a fronted clause whose content is stated is a fact of its own (issue 44)
    assert draft_sentence("After the match ended, police arrested two fans and charged them with assault.") == [
        "The match ended.",
        "Police arrested two fans.",
        "Police charged them with assault.",
    ]
    assert draft_sentence("Rose hopes to build on his display and take some big titles .") == [
        "Rose hopes to build on his display.",
        "Rose hopes to take some big titles.",
    ]


def test_relative_clause_and_apposition_become_their_own_acus():
    assert draft_sentence("Anuradha Koirala, who rescues victims of sex trafficking, has a center in Kathmandu.") == [
        "Anuradha Koirala has a center in Kathmandu.",
        "Anuradha Koirala rescues victims of sex trafficking.",
    ]
    assert draft_sentence("Eva Chapin , 34 , from West Linn , Oregon , has been accused of harassment .") == [
        "Eva Chapin has been accused of harassment.",
        "Eva Chapin is 34.",
        "Eva Chapin is from West Linn , Oregon.",
    ]


def test_place_inside_the_subject_and_lists_of_names():
    assert draft_sentence("Students from the University of Surrey discovered thousands of colonies .") == [
        "Students discovered thousands of colonies.",
        "Students were from the University of Surrey.",
    ]
    assert draft_sentence("James Rodriguez , Pepe and Radamel Falcao among those sold by Porto .") == [
        "James Rodriguez among those sold by Porto.",
        "Pepe among those sold by Porto.",
        "Radamel Falcao among those sold by Porto.",
    ]


def test_trailing_adjuncts_give_one_fact_each_with_the_whole_core():
    # issue 44: the core with each adjunct, never the core alone beside them (a cumulative
    # draft) nor the verb without its object ("Students discovered on coins.")
    assert draft_sentence("Danilo this week agreed to join Real Madrid in the summer for £ 23million .") == [
        "Danilo this week agreed to join Real Madrid in the summer.",
        "Danilo this week agreed to join Real Madrid for £ 23million.",
    ]
    # a phrase after the first adjunct that may belong to its noun stays with it ("colonies on
    # coins in a laboratory"); a time belongs to the verb
    assert draft_sentence("Students discovered thousands of colonies on coins in a laboratory last year .") == [
        "Students discovered thousands of colonies on coins in a laboratory.",
        "Students discovered thousands of colonies last year.",
    ]
    # a short phrase followed by "from" is one adjunct, a single adjunct stays in its clause;
    # quotations are never split and keep their closing quote mark
    assert draft_sentence("She made the claim in an excerpt from her book .") == [
        "She made the claim in an excerpt from her book."
    ]
    assert draft_sentence("One note said : ' There were none in W.L until you came ' .") == [
        "One note said : ' There were none in W.L until you came '."
    ]


@pytest.mark.parametrize(
    "sentence, wholes",
    [
        ("Danilo this week agreed to join Real Madrid in the summer for £ 23million .", ["Real Madrid", "£ 23million"]),
        ("The transfer takes the total from player sales to £ 440 m since 2004 .", ["£ 440 m", "2004"]),
        ("Procter & Gamble reported $ 3.5 billion in sales in March .", ["Procter & Gamble", "$ 3.5 billion"]),
    ],
)
def test_numbers_and_names_are_never_cut(sentence, wholes):
    drafts = draft_sentence(sentence)
    assert len(drafts) >= 2
    for whole in wholes:
        first = whole.split()[0]
        for draft in drafts:
            if first in draft.split():
                assert whole in draft, (whole, draft)
    assert all(any(w in d for d in drafts) for w in wholes)


def test_noun_and_inside_a_phrase_is_not_a_clause():
    # "and" between two nouns of the subject without a new name or number: one fact
    assert draft_sentence("Young women and girls slept outdoors .") == ["Young women and girls slept outdoors."]


def test_a_sentence_without_a_verb_is_one_draft_and_empty_gives_none():
    assert draft_sentence("Five goals for the champions .") == ["Five goals for the champions."]
    assert draft_sentence("   ") == []


def test_verbs_after_determiners_are_nouns_and_names_are_not_verbs():
    tokens = tokenize("The attack left Rose injured")
    assert first_verb(tokens) == 2  # "left", not "attack" (after "the")
    assert first_verb(tokenize("Justin Rose finished second")) == 2


def test_clauses_come_from_semicolons():
    assert len(split_clauses("He won the race ; she lost the final")) == 2


def test_the_rules_drafter_drafts_every_sentence_in_order():
    drafter = get_drafter("rules")
    out = drafter.draft(["Pepe and Falcao were sold by Porto .", "He left ."])
    assert out == [["Pepe was sold by Porto.", "Falcao was sold by Porto."], ["He left."]]
