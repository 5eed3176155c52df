"""Tiny datasets for the learned judge, built in the test (RoSE JSONL written and imported)."""

import json

import numpy as np

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset

LETTERS, VOWELS = list("bdfgklmnprstvz"), list("aeiou")
QUALITY = {"sys_a": 0.15, "sys_b": 0.4, "sys_c": 0.6, "sys_d": 0.85}


def _word(rng) -> str:
    return "".join(rng.choice(LETTERS) + rng.choice(VOWELS) for _ in range(3))


def tiny_dataset(tmp_path, name: str, seed: int, *, documents: int = 16, random_labels: bool = False, labels=True):
    """Documents of 5 one-sentence ACUs; each system copies an ACU into its summary with its own
    probability; the label says whether it did (5% flipped), or is a coin (random_labels)."""
    rng = np.random.default_rng(seed)
    lines = []
    for d in range(documents):
        acus = [" ".join(_word(rng) for _ in range(4)).capitalize() for _ in range(5)]
        outputs, annotations = {}, {}
        for system, quality in QUALITY.items():
            kept = rng.random(5) < quality
            filler = " ".join(_word(rng) for _ in range(6)).capitalize() + "."
            outputs[system] = " ".join([a + "." for a, k in zip(acus, kept, strict=True) if k] + [filler])
            truth = kept ^ (rng.random(5) < 0.05)
            if random_labels:
                truth = rng.random(5) < 0.5
            annotations[system] = {"acu_labels": [int(t) for t in truth]}
        record = {
            "example_id": f"{name}-{d}",
            "source": " ".join(_word(rng) for _ in range(30)),
            "reference": "\n".join(a + "." for a in acus),
            "reference_acus": acus,
            "system_outputs": outputs,
        }
        if labels:
            record["annotations"] = annotations
        lines.append(json.dumps(record))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    import_dataset(str(path), name=name, fmt="rose")
    return Dataset.objects.get(name=name)
