"""The synthetic RoSE-scale dataset of the import, dashboard and recompute benches.

2,500 documents, 22,000 summaries (8.8 systems per document on average), about 20,000 ACUs and
3 of 300 annotators per summary (about 529,000 judgments), as RoSE JSONL; the same records for
the same seed, so every bench measures the same data.
"""

import json
import random
from pathlib import Path

SEED = 20240501
SYSTEMS = [f"system_{i:02d}" for i in range(9)]
ANNOTATORS = [f"w{i:03d}" for i in range(300)]
FUNCTION_WORDS = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "on",
    "for",
    "with",
    "from",
    "by",
    "at",
    "as",
    "that",
    "was",
    "is",
    "has",
    "said",
    "after",
]


def make_vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    syllables = ["ba", "ko", "ri", "tem", "lu", "san", "vo", "der", "mi", "gal", "pre", "son", "tu", "nek", "ar", "io"]
    words = {"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


def sentence(rng: random.Random, vocab: list[str], n_words: int) -> list[str]:
    return [rng.choice(FUNCTION_WORDS) if rng.random() < 0.3 else rng.choice(vocab) for _ in range(n_words)]


def make_record(rng: random.Random, vocab: list[str], doc: int, n_systems: int) -> dict:
    source = " ".join(" ".join(sentence(rng, vocab, rng.randint(12, 28))) + "." for _ in range(rng.randint(15, 25)))
    ref_sentences = [sentence(rng, vocab, rng.randint(14, 26)) for _ in range(rng.randint(2, 4))]
    # About 8 ACUs per reference, each an ordered pick of 3-7 words of one sentence.
    acus = []
    for _ in range(rng.choice([7, 8, 8, 8, 9])):
        words = rng.choice(ref_sentences)
        picked = sorted(rng.sample(range(len(words)), rng.randint(3, 7)))
        acus.append(" ".join(words[i] for i in picked))
    outputs, annotations = {}, {}
    for system in rng.sample(SYSTEMS, n_systems):
        outputs[system] = " ".join(sentence(rng, vocab, rng.randint(50, 70))) + "."
        workers = {a: rng.choices([0, 1], weights=[55, 45], k=len(acus)) for a in rng.sample(ANNOTATORS, 3)}
        majority = [int(sum(col) >= 2) for col in zip(*workers.values(), strict=False)]
        annotations[system] = {
            "acu": sum(majority) / len(acus),
            "acu_labels": majority,
            "annotator_labels": workers,
        }
    return {
        "example_id": f"bench-{doc:05d}",
        "count_id": doc,
        "source": source,
        "reference": "\n".join(" ".join(s) + "." for s in ref_sentences),
        "reference_acus": acus,
        "system_outputs": outputs,
        "annotations": annotations,
    }


def generate(path: Path, documents: int) -> None:
    """8.8 summaries per document on average: 22,000 for 2,500 documents (9 on most, 8 on the rest)."""
    rng = random.Random(SEED)
    vocab = make_vocabulary(rng)
    with_nine = round(documents * 8.8) - 8 * documents
    nine = set(rng.sample(range(documents), with_nine))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for doc in range(documents):
            f.write(json.dumps(make_record(rng, vocab, doc, 9 if doc in nine else 8)) + "\n")
