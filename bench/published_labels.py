"""What a round's published labels are worth: allocation_bench.py's `fixed-3` and `app` (the shipped
adaptive default) on the same simulated crowds, each labelled as the app may publish it
(`--labels majority`: each pair's majority, a tie not present, as a fixed round; `posterior`: its
posterior with the last refit's gold-anchored estimates above 0.5, as hits.allocation.service.pair_labels),
and the differences paired by seed of agreement and tau, each [mean, 95% t-interval low, high]
(allocation_report.paired).
The crowd, the seeds and the documents are allocation_bench's options (documents 0-49 to decide).

    .venv/bin/python bench/published_labels.py --crowd-spec bench/crowds/present.json --seeds 3 --documents 0:50
"""

from __future__ import annotations

import json
from pathlib import Path

from allocation_bench import run
from allocation_report import means, paired
from simulated_crowd import crowd_arguments, documents_slice, expert_labels, read_spec


def main():
    parser = crowd_arguments(__doc__.split("\n")[0], seeds=3, first_seed=0, documents="0:50")
    args = parser.parse_args()
    systems, docs, labels = expert_labels(Path(args.data), documents_slice(args.documents))
    if not labels:
        parser.error(f"no labels/*.label under {args.data} (pass --data or set SHARED_DIR)")
    spec, results = read_spec(Path(args.crowd_spec)), {}
    for rule in ("majority", "posterior"):
        found = run(
            spec,
            systems,
            docs,
            labels,
            seeds=args.seeds,
            first_seed=args.first_seed,
            policies=("fixed-3", "app"),
            rule=rule,
        )
        results |= {f"{name} {rule}": rows for name, rows in found.items()}
    keep = ("judgments", "agreement", "agreement_sd", "tau", "tau_sd", "gold_guard_fired")
    out = {"policies": {name: {k: m[k] for k in keep} for name, m in means(results).items()}}
    for base in ("fixed-3 majority", "app majority"):
        differences = paired(results, base)
        out[f"minus {base}"] = {k: [v["agreement_minus_base"], v["tau_minus_base"]] for k, v in differences.items()}
    out["seeds"] = list(range(args.first_seed, args.first_seed + args.seeds))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
