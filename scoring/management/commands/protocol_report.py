"""python manage.py protocol_report NAME [--rating-round ID] [--power] [--json] [--resamples N] ..."""

import json

from django.core.management.base import BaseCommand, CommandError

from scoring.protocols.report import Settings, build_report
from scoring.protocols.selectors import protocol_data

from ._dataset import dataset_and_rating_round


def _ci(entry) -> str:
    if not entry or entry.get("value") is None:
        return "n/a"
    return f"{entry['value']:+.3f} [{entry['low']:+.3f}, {entry['high']:+.3f}]"


def _n(entry, report) -> str:
    """The documents behind a figure when fewer than the round's."""
    n = (entry or {}).get("documents")
    return f" (n = {n})" if n is not None and n != report["documents"] else ""


def _ranked(ranking) -> str:
    """Systems best first, tied ones (the same rank) joined by " = "."""
    text = ""
    for k, row in enumerate(ranking):
        if k:
            text += " = " if row["rank"] == ranking[k - 1]["rank"] else ", "
        text += row["system"]
    return text


class Command(BaseCommand):
    help = "RoSE §5's protocol comparison of a dataset's rating round (the Protocols page), as text or --json."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rating-round", type=int, help="a rating round's id (default: the latest)")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--power", action="store_true", help="also the power analysis per protocol")
        parser.add_argument("--method", choices=("pearson", "spearman", "kendall"), default="pearson")
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--power-trials", type=int, default=100)
        parser.add_argument("--power-resamples", type=int, default=1000)
        parser.add_argument("--min-examples", type=int, default=10, help="case study: examples a rater needs")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        _, round_ = dataset_and_rating_round(options["name"], options["rating_round"])
        for key in ("resamples", "power_trials", "power_resamples", "min_examples"):
            if not 1 <= options[key] <= 1_000_000:
                raise CommandError(f"--{key.replace('_', '-')} must be from 1 to 1,000,000")
        settings = Settings(
            method=options["method"],
            n_resamples=options["resamples"],
            power_trials=options["power_trials"],
            power_resamples=options["power_resamples"],
            min_examples=options["min_examples"],
            seed=options["seed"],
        )
        report = build_report(protocol_data(round_), settings, with_power=options["power"])
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=1))
            return
        self._text(report)

    def _text(self, report):
        out, labels = self.stdout.write, report["labels"]
        out(
            f"Rating round {report['round']['name']!r}: {report['documents']} documents x {len(report['systems'])} systems"
        )
        for name, a in report["alpha"].items():
            out(f"alpha {labels[name]}: interval {a['interval']}, ordinal {a['ordinal']} ({a['ratings']} ratings)")
        for level in ("summary", "system"):
            out(f"{level}-level {report['settings']['method']} correlations (95% CI):")
            for e in report["correlations"][level]:
                out(f"  {labels[e['a']]} vs {labels[e['b']]}: {_ci(e)}{_n(e, report)}")
            for name, e in report["length"][level].items():
                out(f"  {labels[name]} vs length: {_ci(e)}{_n(e, report)}")
        for name, ranking in report["rankings"].items():
            out(f"ranking by {labels[name]}: " + _ranked(ranking))
        case = report["case_study"]
        if case and case["raters"]:
            out(
                f"case study ({len(case['raters'])} raters): own Ref-free vs own Prior {case['mean']['own_prior']:.3f}, "
                f"vs others' Ref-free {case['mean']['others']:.3f}"
            )
        for name, p in (report["power"] or {}).items():
            if not p["mean"] and p.get("systems", 2) < 2:
                out(f"power {labels[name]}: none, {p['systems']} system rated (no pair of systems to tell apart)")
                continue
            if not p["mean"]:
                out(f"power {labels[name]}: none, {p['documents']} documents rated for every system")
                continue
            out(
                f"power {labels[name]} ({p['documents']} documents): "
                + ", ".join(f"{n} docs {v:.2f}" for n, v in zip(p["sizes"], p["mean"], strict=False))
            )
