"""Issue 44: the rules and parsed drafters against the faithfulness set (`data/faithfulness.jsonl`), drafts of
REALSumm documents 0-49 each labelled by reading it against its sentence (docs/drafting.md,
"The faithfulness set"). The drafter re-drafts those references; every draft it makes must be in
the set (a new draft fails as unlabelled: label it, by reading it, before the change lands) and at
most 2% of them may be unfaithful or ungrammatical."""

import json
from collections import Counter
from pathlib import Path

import pytest

from annotation.drafting.parsed import draft_parsed_reference, load_parser
from annotation.drafting.rules import draft_reference
from annotation.text import split_tagged_sentences

SET = Path(__file__).parent / "data" / "faithfulness.jsonl"
LABELS = {"faithful", "unfaithful", "ungrammatical", "not atomic"}
DOCUMENTS = range(50)  # the rules were developed on these; documents 50-99 are held out
MAX_WRONG = 0.02


def labelled() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_is_labelled_drafts_of_documents_0_to_49():
    rows = labelled()
    assert len(rows) >= 300
    assert all(r["label"] in LABELS for r in rows)
    assert all(r["document"] in DOCUMENTS for r in rows)
    keys = [(r["document"], r["sentence"], r["draft"]) for r in rows]
    assert len(keys) == len(set(keys)), "a draft is labelled twice"
    # every kind of label occurs: the set can tell a wrong draft from a right one
    assert set(Counter(r["label"] for r in rows)) == LABELS


def parsed(sentences):
    return draft_parsed_reference(sentences, load_parser())


@pytest.mark.parametrize("draft", [draft_reference, parsed], ids=["rules", "parsed"])
def test_the_drafter_is_faithful_on_the_labelled_set(realsumm_path, draft):
    references = [
        split_tagged_sentences(line)
        for line in (realsumm_path / "references.txt").read_text(encoding="utf-8").splitlines()
    ]
    rows = labelled()
    label = {(r["document"], r["sentence"], r["draft"]): r["label"] for r in rows}
    for r in rows:  # the set reads the same sentences the drafter does
        assert references[r["document"]][r["sentence"]] == r["text"]
    unlabelled, counts = [], Counter()
    for d in DOCUMENTS:
        for k, drafts in enumerate(draft(references[d])):
            for text in drafts:
                if (d, k, text) not in label:
                    unlabelled.append(f"document {d}, sentence {k}: {references[d][k]!r} -> {text!r}")
                counts[label.get((d, k, text))] += 1
    assert not unlabelled, "drafts not in the faithfulness set (label them):\n" + "\n".join(unlabelled)
    total = sum(counts.values())
    wrong = counts["unfaithful"] + counts["ungrammatical"]
    assert total >= 250, counts
    assert wrong <= MAX_WRONG * total, counts


def test_the_set_fails_the_drafter_before_issue_44():
    # the drafts the drafter of c308ebd made of the same sentences (flagged in the set) are far
    # over the bound: the check can fail
    old = Counter(r["label"] for r in labelled() if r["c308ebd"])
    assert sum(old.values()) >= 400
    assert old["unfaithful"] + old["ungrammatical"] > 10 * MAX_WRONG * sum(old.values()), old


@pytest.mark.parametrize(
    "draft", [draft_reference, pytest.param(parsed, marks=pytest.mark.slow)], ids=["rules", "parsed"]
)
def test_every_sentence_of_the_source_articles_drafts_with_the_invariants(realsumm_path, draft):
    """Sentences the rules were not written for (REALSumm's source articles, lower-cased, long,
    quoted): no failure, quotes balanced wherever the sentence's are, no cumulative draft."""
    from annotation.drafting.rules.draft import inserted
    from annotation.language.tokens import quotes_balanced
    from annotation.text import split_sentences

    articles = (realsumm_path / "documents.txt").read_text(encoding="utf-8").splitlines()
    made = 0
    for article in articles:
        sentences = split_sentences(article)[:40]
        for sentence, drafts in zip(sentences, draft(sentences), strict=True):
            made += len(drafts)
            words = [d.lower().rstrip(".!?").split() for d in drafts]
            assert not quotes_balanced(sentence) or all(quotes_balanced(d) for d in drafts), (sentence, drafts)
            assert not any(inserted(a, b) for a in words for b in words), (sentence, drafts)
    assert made > 2000
    for odd in ["", " ", ".", "'", "' ' '", '"', "and and and", "The", "He said", "x" * 5000, "— – -"]:
        assert isinstance(draft([odd, odd]), list)
