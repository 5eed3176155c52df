"""Drafts against human ACUs: matching P/R/F1, the Lite2.x criterion and the human-unit budget curve."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.drafting import DEFAULT_DRAFTER, DrafterError
from scoring.drafts.documents import document_range
from scoring.drafts.report import BUDGET_SHARES, report
from scoring.drafts.unit_budget.regressor import RegressorUnavailable
from scoring.machine.judges import JudgeUnavailable

from ._dataset import dataset_and_round


def _documents(text: str | None, dataset) -> range | None:
    """The --documents range START:END of the dataset's document positions, or a CommandError."""
    if not text:
        return None
    try:
        return document_range(text, dataset.documents.count(), f"dataset {dataset.name!r}")
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _check_counts(opts) -> None:
    for flag, key, least in (
        ("--errors", "errors", 0),
        ("--resamples", "resamples", 1),
        ("--random-draws", "random_draws", 1),
    ):
        if opts[key] < least:
            raise CommandError(f"{flag} takes a whole number of {least} or more.")


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("name", help="dataset name")
        parser.add_argument("--drafter", default=DEFAULT_DRAFTER, choices=["parsed", "rules", "llm"])
        parser.add_argument("--judge", default=None, help="lexical or embedding (default: embedding when installed)")
        parser.add_argument(
            "--budget",
            type=float,
            nargs="+",
            default=None,
            help=f"human shares of sentences (default {' '.join(map(str, BUDGET_SHARES))})",
        )
        parser.add_argument(
            "--criterion",
            default="abs",
            choices=["abs", "spread"],
            help="per-sentence error the budget regressor learns: abs (Lite2.x) or spread (between systems)",
        )
        parser.add_argument(
            "--agreement-with",
            nargs="*",
            default=[],
            choices=["parsed", "rules", "llm"],
            help="other drafters whose agreement with --drafter is a regressor feature",
        )
        parser.add_argument(
            "--against",
            default=None,
            metavar="FILE",
            help="also compare the units of FILE (pyramid format: one line per reference, units tab-separated, "
            "e.g. Lite3Pyramid's STUs.txt) with the human ACUs",
        )
        parser.add_argument(
            "--errors",
            type=int,
            default=0,
            metavar="N",
            help="print the N sentences where drafts and human ACUs differ most",
        )
        parser.add_argument(
            "--documents",
            default=None,
            metavar="START:END",
            help="only the documents at these positions in the dataset's order (END excluded), e.g. 50:100",
        )
        parser.add_argument(
            "--resamples", type=int, default=10_000, help="bootstrap resamples of the --against comparison"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--random-draws", type=int, default=20)
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **opts):
        dataset, _ = dataset_and_round(opts["name"], None)
        budgets = tuple(opts["budget"] or BUDGET_SHARES)
        documents = _documents(opts["documents"], dataset)
        if any(not 0 <= b <= 1 for b in budgets):
            raise CommandError("--budget takes shares between 0 and 1, e.g. 0.5 for half of the sentences.")
        _check_counts(opts)
        try:
            out = report(
                dataset,
                drafter=opts["drafter"],
                judge_name=opts["judge"],
                budgets=budgets,
                seed=opts["seed"],
                random_draws=opts["random_draws"],
                criterion=opts["criterion"],
                agreement_with=tuple(opts["agreement_with"]),
                against=opts["against"],
                worst_sentences=opts["errors"],
                documents=documents,
                resamples=opts["resamples"],
            )
        except (DrafterError, JudgeUnavailable, RegressorUnavailable, ValueError) as exc:
            raise CommandError(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=2))
            return
        m, l2 = out["matching"], out["lite2x"]
        self.stdout.write(
            f"{out['dataset']}: drafter {out['drafter']}, judge {out['judge']['name']}, {out['documents']} documents, "
            f"{out['systems']} systems, {out['sentences']} sentences"
        )
        self.stdout.write(
            f"matching (>= {m['threshold']}): precision {m['precision']:.4f} recall {m['recall']:.4f} F1 {m['f1']:.4f} "
            f"({m['matched']} of {m['drafts']} drafts, {m['human_acus']} human ACUs)"
        )
        if "against" in out:
            a = out["against"]["matching"]
            self.stdout.write(
                f"against {out['against']['file']}: precision {a['precision']:.4f} recall {a['recall']:.4f} "
                f"F1 {a['f1']:.4f} ({a['matched']} of {a['drafts']} units, "
                f"{out['against']['units_per_reference']:.2f} per reference)"
            )
            if "all_units" in out["against"]:
                self.stdout.write(
                    f"  summary Pearson {out['against']['all_units']['summary_pearson']:.4f} "
                    f"(drafts {out['lite2x']['all_drafts']['summary_pearson']:.4f})"
                )
            if "comparison" in out["against"]:
                c = out["against"]["comparison"]
                self.stdout.write(
                    f"  drafts - file over {c['documents']} documents ({c['confidence']:.0%} bootstrap intervals): "
                    + ", ".join(
                        f"{k} {v['value']:+.4f} [{v['ci'][0]:+.4f}, {v['ci'][1]:+.4f}]"
                        for k, v in c["difference"].items()
                    )
                )
        ps = out["per_sentence"]
        self.stdout.write(f"per sentence: {ps['drafts_mean']:.2f} drafts, {ps['human_acus_mean']:.2f} human ACUs")
        self.stdout.write(
            f"Lite2.x criterion: mean sentence error {l2['sentence_error_mean']:.4f} (median {l2['sentence_error_median']:.4f})"
        )
        if "note" in out:
            self.stdout.write(out["note"])
        for row in out.get("sentence_errors", []):
            self.stdout.write(f"\n{row['errors']} errors: {row['sentence']}")
            self.stdout.write("  missed human ACUs: " + (" | ".join(row["missed_human_acus"]) or "-"))
            self.stdout.write("  unmatched drafts: " + (" | ".join(row["unmatched_drafts"]) or "-"))
        for point in out.get("budget", []):
            r, q = point["regressor"], point["random"]
            self.stdout.write(
                f"budget {point['human_share']:.0%} human: regressor summary {r['summary_pearson']:.4f} system "
                f"{r['system_pearson']:.4f} | random summary {q['summary_pearson']:.4f} system {q['system_pearson']:.4f}"
            )
