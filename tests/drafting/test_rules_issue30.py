"""Issue 30's five reference sentences: the facts an expert writes for each must be among the
rules drafter's units (content, not wording: each expected fact is matched by one draft whose
content words it shares, by the lexical judge's symmetric similarity), and what an expert leaves
out gives no unit."""

import numpy as np
import pytest

from annotation.drafting import get_drafter
from annotation.drafting.rules import draft_reference, draft_sentence, split_run_on
from scoring.drafts.quality import match_one_to_one, symmetric_similarity
from scoring.machine.judges import get_judge

SIMILAR = 0.75  # stricter than draft_report's 0.5: the draft says this fact and little else


def unmatched(expected: list[str], drafts: list[str]) -> list[str]:
    """The expected facts that no draft matches (one-to-one, symmetric lexical similarity)."""
    judge = get_judge("lexical")
    forward = judge.judge([(d, e) for d in drafts for e in expected]).reshape(len(drafts), len(expected))
    backward = judge.judge([(e, d) for d in drafts for e in expected]).reshape(len(drafts), len(expected))
    pairs = match_one_to_one(symmetric_similarity(forward, backward), SIMILAR)
    found = {e for _, e in pairs}
    return [fact for k, fact in enumerate(expected) if k not in found]


def test_coreference_names_the_welshman_and_adds_the_x_is_y_fact():
    drafts = [
        d
        for ds in draft_reference(
            [
                "Joe Calzaghe won his first world title in 1997 .",
                "The Welshman retired unbeaten in 2009 .",
                "He now trains young boxers in Newbridge .",
            ]
        )
        for d in ds
    ]
    expected = [
        "Joe Calzaghe won his first world title.",
        "Joe Calzaghe is a Welshman.",
        "Joe Calzaghe retired unbeaten.",
        "Joe Calzaghe retired in 2009.",
        "Joe Calzaghe trains young boxers.",
    ]
    assert unmatched(expected, drafts) == []
    assert not any(d.startswith(("The Welshman", "He ")) for d in drafts)


def test_one_argument_per_unit_object_not_repeated_and_quotes_and_by_split():
    drafts = draft_sentence("Bayern Munich beat Porto 6 - 1 in the Champions League on Tuesday .")
    assert (
        unmatched(
            [
                "Bayern Munich beat Porto 6-1.",
                "Bayern Munich won in the Champions League.",
                "Bayern Munich won on Tuesday.",
            ],
            drafts,
        )
        == []
    )
    assert sum("Porto" in d for d in drafts) == 1  # the object is not repeated in every adjunct draft

    # beside a single adjunct a long object stays: no bare "verb + adjunct" fragment
    drafts = draft_sentence("The council approved the new housing plan on Monday .")
    expected = ["The council approved the new housing plan.", "The council approved the new housing plan on Monday."]
    assert unmatched(expected, drafts) == []
    assert "The council approved on Monday." not in drafts
    drafts = draft_sentence("The council approved the new housing plan at a meeting on Monday .")
    assert sum("housing plan" in d for d in drafts) == 1

    drafts = draft_sentence("Joe Thomas was spared jail in an ' act of mercy ' by judge in January .")
    expected = [
        "Joe Thomas was spared jail.",
        "Joe Thomas was spared jail in an act of mercy.",
        "Joe Thomas was spared jail by a judge.",
        "Joe Thomas was spared jail in January.",
    ]
    assert unmatched(expected, drafts) == []


def test_participle_clause_gives_finite_units_one_per_object():
    drafts = draft_sentence(
        "McIlroy looking for third straight major victory after winning The Open and USPGA Championship last year ."
    )
    assert unmatched(["McIlroy won The Open last year.", "McIlroy won the USPGA Championship last year."], drafts) == []
    assert not any("after winning" in d for d in drafts)
    # "despite being ...", complement clauses and "to"-infinitives after an object
    assert (
        unmatched(
            ["Catherine Nevin was allowed out.", "Catherine Nevin was jailed for life in April 2000."],
            draft_sentence("Catherine Nevin was allowed out despite being jailed for life in April 2000 ."),
        )
        == []
    )
    assert (
        unmatched(
            ["Fabregas took to Instagram.", "Fabregas was all smiles despite the bruises."],
            draft_sentence("Fabregas took to Instagram to show he was all smiles despite the bruises ."),
        )
        == []
    )


def test_run_on_sentence_is_cut_into_its_sentences():
    sentence = (
        "Another man dialled 999 to say he dropped a burger which was ' bleeding ' East of England ambulance "
        "service warned hoax calls can cost lives ."
    )
    assert len(split_run_on(sentence)) == 2
    drafts = draft_sentence(sentence)
    expected = [
        "Another man dialled 999.",
        "East of England ambulance service warned hoax calls can cost lives.",
        "Hoax calls can cost lives.",
    ]
    assert unmatched(expected, drafts) == []
    assert len(drafts) >= 3


@pytest.mark.parametrize(
    "sentence",
    [
        "CLICK HERE for all the latest Chelsea news .",
        "CLICK HERE for all the latest Chelsea news.",  # issue 27, item 12, as the editor showed it
        "Scroll down for video",
        "READ MORE: the full story",
    ],
)
def test_boilerplate_gives_no_draft(sentence):
    assert draft_sentence(sentence) == []
    assert get_drafter("rules").draft(["Chelsea beat Stoke 2 - 1 .", sentence]) == [["Chelsea beat Stoke 2 - 1."], []]


def test_the_helper_is_strict_enough_to_fail():
    # a whole-sentence draft does not count as the separate facts it holds
    assert unmatched(
        ["Bayern Munich beat Porto.", "Bayern Munich won on Tuesday."],
        ["Bayern Munich beat Porto 6 - 1 in the Champions League on Tuesday."],
    ) == ["Bayern Munich beat Porto.", "Bayern Munich won on Tuesday."]
    assert np.isfinite(SIMILAR)
