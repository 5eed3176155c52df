"""python manage.py compute_scores NAME [--round ID] [--aggregation majority|dawid-skene] --json"""

import json

from django.core.management.base import BaseCommand

from scoring.results.exports.scores_json import scores_json
from scoring.results.exports.tables import write_scores_csv
from scoring.runs.services import AGGREGATIONS, compute_scores

from ._dataset import dataset_and_round


class Command(BaseCommand):
    help = "Compute system scores with bootstrap CIs and both alphas; store the run and print it."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--round", type=int, help="a batch or imported label set (default: all judgments)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--resamples", type=int, default=10_000)
        parser.add_argument(
            "--aggregation",
            choices=AGGREGATIONS,
            default="majority",
            help="ACU labels by majority vote (default, RoSE) or Dawid-Skene",
        )
        parser.add_argument(
            "--csv", help="also write per-summary scores (example_id, system, acu, normalized_acu) here"
        )

    def handle(self, *args, **options):
        dataset, batch = dataset_and_round(options["name"], options["round"])
        run = compute_scores(
            dataset,
            batch,
            seed=options["seed"],
            n_resamples=options["resamples"],
            trigger="command",
            aggregation=options["aggregation"],
        )
        result = scores_json(run)
        if options["csv"]:
            with open(options["csv"], "w", encoding="utf-8", newline="") as stream:
                write_scores_csv(run, stream)
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(f"{'system':<40} {'ACU':>8} {'95% CI':>17} {'norm.':>8} {'length':>7} {'docs':>5}")
        for name, s in sorted(result["systems"].items(), key=lambda kv: -kv[1]["acu"]):
            ci = "[{:.3f}, {:.3f}]".format(*s["acu_ci"]) if s["acu_ci"] else "-"
            self.stdout.write(
                f"{name:<40} {s['acu']:8.4f} {ci:>17} {s['normalized_acu']:8.4f} {s['length']:7.1f} {s['documents']:5d}"
            )
        if result["counts"].get("documents_differ"):
            self.stdout.write(
                f"systems were judged on different documents; {result['counts']['complete_documents']} "
                "were judged for every system"
            )
        a = result["alpha"]
        acu_level, summary_level = (_alpha(a[level]) for level in ("acu_level", "summary_level"))
        note = ""
        if a["acu_level"] is None or a["summary_level"] is None:
            note = " (undefined: no unit judged by two workers, or a single value in all labels)"
        self.stdout.write(f"alpha: ACU level {acu_level}, summary level {summary_level}{note}; run {run.pk}")


def _alpha(value) -> str:
    """An alpha as the pages show it (4 decimals), "undefined" where it is null (never None or nan)."""
    return "undefined" if value is None else f"{value:.4f}"
