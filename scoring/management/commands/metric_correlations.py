"""python manage.py metric_correlations NAME [--round ID] [--method kendall|pearson|spearman] --json"""

import json

from django.core.management.base import BaseCommand, CommandError

from scoring.models import ScoringRun
from scoring.runs import statistics

from ._dataset import dataset_and_round


def _figure(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Correlations of imported metrics with the human ACU scores, with CIs and significance."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--round", type=int)
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--permutations", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--method",
            choices=statistics.METHODS,
            default="kendall",
            help="correlation of the metric comparison tests (default kendall)",
        )

    def handle(self, *args, **options):
        dataset, batch = dataset_and_round(options["name"], options["round"])
        params = {
            "n_resamples": options["resamples"],
            "n_permutations": options["permutations"],
            "seed": options["seed"],
            "method": options["method"],
        }
        run = statistics.run_metric_correlations(
            statistics.start(dataset, ScoringRun.Kind.METRICS, params, batch, trigger="command").pk
        )
        if run.status != ScoringRun.Status.DONE:
            raise CommandError(run.error)
        if not run.outputs["metrics"]:
            raise CommandError("No metric has scores for every judged summary; import them with import_metric_scores.")
        result = {**run.outputs, "run": run.pk}
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        for metric, missing in (result.get("left_out") or {}).items():
            self.stdout.write(f"{metric}: left out, no score for {missing} judged summaries")
        for metric, levels in result["metrics"].items():
            for level, methods in levels.items():
                cells = "  ".join(
                    f"{m} {_figure(v['value'])} [{_figure(v['low'])}, {_figure(v['high'])}]" for m, v in methods.items()
                )
                self.stdout.write(f"{metric:<20} {level:<8} {cells}")
        if result.get("coverage") == "shared":
            self.stdout.write(
                f"no document is judged for every system: correlations on the documents each uses "
                f"({result['complete_documents']} complete of {result['documents']})"
            )
        if result.get("small_sample"):
            self.stdout.write("small sample: fewer than 30 documents behind some figure")
        if result.get("significance_note"):
            self.stdout.write(result["significance_note"])
        for t in result["significance"]:
            self.stdout.write(
                f"{t['level']:<8} {t['better']} better than {t['worse']} ({t['method']}, "
                f"delta {t['delta']:.4f}): p permutation {t['p_permutation']:.4f}, "
                f"p bootstrap {t['p_bootstrap']:.4f}, {t['documents']} documents"
            )
