"""python manage.py triage_report NAME [--judge-run ID] [--round ID] [--grid 0.8,0.9] [--folds K]
[--min-agreement A] [--max-change D] --json"""

import json

from django.core.management.base import BaseCommand, CommandError

from hits.models import JudgeRun
from scoring.machine.reports import triage_report
from scoring.machine.selectors import triage_source
from scoring.stats import triage_crossfit

from ._dataset import dataset_and_round


class Command(BaseCommand):
    help = (
        "On data that already has human labels: for a grid of confidences c, what a triage batch from this "
        "judge run would save and how far its combined labels and scores would be from the full human ones."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--judge-run",
            type=int,
            help="a finished judge run of the dataset (default: the dataset's own newest learned run fit for "
            "ranking, else its own newest calibrated run fit for ranking; a transferred model only when no own run is)",
        )
        parser.add_argument(
            "--round", type=int, help="the human labels to compare with (default: the run's calibration labels)"
        )
        parser.add_argument(
            "--grid", help="comma-separated confidences (default 0.5,0.6,0.7,0.8,0.85,0.875,0.9,0.925,0.95,0.99)"
        )
        parser.add_argument(
            "--folds",
            type=int,
            default=triage_crossfit.DEFAULT_FOLDS,
            help="folds of documents: c is chosen on the others and applied to each (default 5)",
        )
        parser.add_argument(
            "--min-agreement",
            type=float,
            default=triage_crossfit.DEFAULT_MIN_AGREEMENT,
            help="the chosen c keeps agreement with the human labels at least this (default 0.97)",
        )
        parser.add_argument(
            "--max-change",
            type=float,
            default=triage_crossfit.DEFAULT_MAX_CHANGE,
            help="and the largest change of a system's score at most this (default 0.02)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        dataset, label_round = dataset_and_round(options["name"], options["round"])
        run = self._run(dataset, options["judge_run"])
        grid = self._grid(options["grid"])
        if options["folds"] < 2 or not 0 < options["min_agreement"] <= 1 or not 0 <= options["max_change"] <= 1:
            raise CommandError("--folds is at least 2; --min-agreement lies in (0, 1]; --max-change in [0, 1].")
        try:
            report = triage_report(
                run,
                label_round=label_round,
                grid=grid,
                folds=options["folds"],
                min_agreement=options["min_agreement"],
                max_change=options["max_change"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(report))
            return
        self._table(run, report)
        self._crossfit(report["crossfit"])
        self._suggestion(report["suggestion"])

    @staticmethod
    def _run(dataset, pk):
        """The judge run named, or the dataset's default triage source; done, or a clear error."""
        if pk is None:
            run = triage_source(dataset)
            if run is None:
                raise CommandError(f"Dataset {dataset.name!r} has no finished judge run: run judge_dataset first.")
        else:
            run = JudgeRun.objects.filter(pk=pk, batch__dataset=dataset).first()
        if run is None:
            raise CommandError(f"Dataset {dataset.name!r} has no judge run {pk}.")
        if run.status != JudgeRun.Status.DONE:
            raise CommandError(f"Judge run {run.pk} is {run.status}, not done.")
        return run

    @staticmethod
    def _grid(text):
        """--grid as a list of confidences in [0.5, 1], or None for the default grid."""
        if not text:
            return None
        try:
            grid = [float(c) for c in text.split(",") if c.strip()]
        except ValueError:
            raise CommandError("--grid takes numbers separated by commas, e.g. 0.8,0.9.") from None
        if not grid or any(not 0.5 <= c <= 1 for c in grid):
            raise CommandError("Every confidence in --grid must lie between 0.5 and 1.")
        return grid

    def _table(self, run, report):
        self.stdout.write(
            f"judge run {run.pk} ({run.judge} v{run.version}) against {report['labels']} labels, "
            f"{report['pairs']} labelled pairs"
        )
        self.stdout.write(
            f"{'c':>6} {'saved':>7} {'agreement':>10} {'decided acc.':>12} {'system tau':>10} {'max change':>10}"
        )
        self.stdout.write(f"{report['ranking']['reason']}")
        for r in report["rows"]:
            tau = "-" if r["system_kendall"] is None else f"{r['system_kendall']:.3f}"
            acc = "-" if r["decided_accuracy"] is None else f"{r['decided_accuracy']:.4f}"
            self.stdout.write(
                f"{r['c']:6.4g} {r['saved_share']:7.3f} {r['agreement']:10.4f} {acc:>12} {tau:>10} "
                f"{r['max_system_change']:10.4f}"
            )
        best = report["saved_at_tau_0_95"]
        if best:
            self.stdout.write(
                f"saved at system tau >= 0.95 (at c and every larger c): {best['saved_share']:.3f} at c = {best['c']}"
            )
        else:
            self.stdout.write("no confidence of the grid keeps the system tau >= 0.95")
        self.stdout.write("(the grid and the line above are in sample: c chosen on the documents reported on)")

    def _crossfit(self, cross):
        if cross is None:
            self.stdout.write("cross-fitted: fewer than two documents left to cross-fit on")
            return
        crit, held = cross["criteria"], cross["held_out"]
        self.stdout.write(
            f"cross-fitted ({len(cross['folds'])} folds of documents; c per fold chosen on the other folds for "
            f"agreement >= {crit['min_agreement']} and largest system change <= {crit['max_system_change']}): "
            "c = " + ", ".join("none" if f["c"] is None else f"{f['c']:g}" for f in cross["folds"])
        )
        for key, label in (
            ("saved_share", "held-out saving"),
            ("agreement", "agreement"),
            ("max_system_change", "largest system change"),
            ("system_kendall", "system tau"),
        ):
            if held[key] is not None:
                value, low, high = held[key]
                self.stdout.write(f"  {label}: {value:.4f} [{low:.4f}, {high:.4f}]")
        if held["system_kendall"] is None:
            self.stdout.write(f"  system tau not shown: {held['systems']} systems (fewer than 20)")

    def _suggestion(self, suggestion):
        if suggestion is None:
            return
        c = "none (the judge should decide nothing)" if suggestion["c"] is None else f"{suggestion['c']:g}"
        self.stdout.write(
            f"suggested for new documents (a pairs batch's triage confidence): c = {c}, chosen on "
            f"{suggestion['chosen_on']} ({suggestion['documents']}) for agreement >= "
            f"{suggestion['criteria']['min_agreement']}; the judge decides {suggestion['decided_share']:.3f} of their pairs"
        )
