"""A dataset file with what imports and exports have to get right: texts with quotes,
backslashes, tabs, newlines, carriage returns, control characters and non-ASCII; system names
whose code-point order differs from a natural-language collation; three annotators per
summary with a label left out (None) and ties."""

import json

from .conftest import DEMO_ROSE

ODD = 'quote " backslash \\ tab \t newline \n cr \r bell \x07 escape \x1b unicode é ✓ 𝄞 line-sep \u2028 end'


def tricky_file(tmp_path):
    """The demo records with odd texts, three annotators (one label left out, ties) and
    system names whose code-point order differs from a natural-language one."""
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        n = len(record["reference_acus"])
        record["source"] = f"{ODD} {record['source']}"
        record["reference_acus"][0] = f"{record['reference_acus'][0]} {ODD}"
        outputs = {}
        for j, (system, text) in enumerate(record["system_outputs"].items()):
            name = ["Zeta", "alpha", "Émile", "beta_2"][j % 4] + f"-{system}"
            outputs[name] = f"{text} {ODD}" if j == 0 else text
        record["system_outputs"] = outputs
        record["annotations"] = {
            name: {
                "annotator_labels": {
                    "w1": [1] * n,
                    "w2": [(k + i) % 2 for k in range(n)],
                    "w3": [None if k == 1 else 0 for k in range(n)],  # ties where w1 and w2 differ
                }
            }
            for name in list(outputs)[:3]
        }
        out.append(json.dumps(record))
    path = tmp_path / "tricky.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
