"""Atomicity hints: advice, never a block."""

from annotation.hints import joins_two_facts, reference_hints, usual_length


def test_each_kind_of_hint():
    sentences = [
        (
            "Anuradha Koirala and 425 young women and girls have been sleeping outdoors because of aftershocks .",
            [
                "Anuradha Koirala has been sleeping outdoors.",
                "Young women and girls have been sleeping outdoors.",
                "Koirala founded the charity Maiti Nepal but the hospice wall crumbled after the earthquake.",
                "Anuradha Koirala has been sleeping outdoors!",
                "Bananas are yellow.",
            ],
        ),
        ("Pushpa Basnet cares for 45 children .", []),
    ]
    hints = reference_hints(sentences, usual_length(["a b c d e f", "a b c d e f g"]))
    acus = hints["acus"][0]
    assert acus[0] == []
    assert acus[1] == []  # "women and girls": one fact, no hint
    assert any("Joins two facts" in h for h in acus[2]) and any("Long" in h for h in acus[2])
    assert any("Nearly the same" in h for h in acus[3])
    assert any("no content word" in h for h in acus[4])
    assert hints["sentences"] == [[], ["No ACU for this sentence yet."]]


def test_joiner_needs_two_standalone_parts():
    assert joins_two_facts("Salt and pepper were served.") is None
    assert joins_two_facts("The mayor resigned on Monday and the council elected a successor.") == "and"
    assert usual_length([]) == 7


def test_and_in_a_noun_phrase_is_no_second_fact_whatever_its_length():
    # guideline 3: "women and girls" is one fact; so is a long subject of one verb
    text = "Anuradha Koirala and 425 young women and girls have been sleeping outdoors."
    assert joins_two_facts(text) is None
    assert joins_two_facts("Sales rose 5 % in March and prices fell across the whole region.") == "and"
    assert joins_two_facts("Koirala founded the charity Maiti Nepal but the hospice wall crumbled.") == "but"


def test_an_acu_written_twice_is_called_the_same_not_nearly_the_same():
    """Walk: an ACU typed twice under its sentence was hinted "Nearly the same as ACU …", so the author
    looked for a difference that was not there."""
    sentences = [
        (
            "Pushpa Basnet and 45 children she cares for were forced to evacuate their residence .",
            [
                "Pushpa Basnet was forced to evacuate her residence.",
                "Pushpa Basnet was forced to evacuate her residence.",
                "pushpa basnet was forced to evacuate her residence.",
                "Pushpa Basnet was forced to evacuate her residence!",
            ],
        )
    ]
    acus = reference_hints(sentences, usual_length(["a b c d e f"]))["acus"][0]
    same = "The same text as ACU “Pushpa Basnet was forced to evacuate her residence.”: keep one."
    assert acus[1] == [same] and acus[2] == [same]
    assert acus[3] == ["Nearly the same as ACU “Pushpa Basnet was forced to evacuate her residence.”"]
