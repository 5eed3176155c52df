"""python manage.py judge_dataset NAME --judge lexical|learned|nli|llm [--model-dir DIR] [--model-from RUN]
[--cross-encoder [--ce-folds K] [--ce-epochs E]] [--train-share F] [--time-budget SECONDS] [--round ID] [--device cpu|cuda]
[--resume RUN | --new] [--fresh-answers] --json

An llm run that failed or was interrupted is resumed by the same command: it asks only the
summaries it has no stored answer for (scoring.machine.runs.resume_judge_run). A new llm run
reuses the answers earlier runs got for the very same questions, unless --fresh-answers."""

import json

from django.core.management.base import BaseCommand, CommandError

from hits.models import JudgeRun
from scoring.machine.background import resumable
from scoring.machine.judges import RUN_JUDGE_NAMES, judges_taking, keeps_answers
from scoring.machine.judges import judge_options as sort_options
from scoring.machine.reports import run_json
from scoring.machine.runs import JudgeRunError, resume_judge_run, run_judge_run, start_judge_run, unfinished_twin

from ._dataset import dataset_and_round

# The judges' options this command takes (each judge takes its own: judges.option_names).
JUDGE_OPTIONS = (
    "model_dir",
    "model_from",
    "cross_encoder",
    "ce_folds",
    "ce_epochs",
    "time_budget",
    "device",
    "batch_size",
    "train_share",
    "fresh_answers",
)


def _count(value) -> str:
    return "unknown" if value is None else f"{value:,}"


def usage_line(u: dict) -> str:
    """The llm run's spending in one line: the summaries it asked and those it reused from earlier
    runs (paid for there), then what its calls cost; tokens no answer reported are unknown, not 0."""
    tokens = f"tokens: {_count(u['prompt_tokens'])} prompt, {_count(u['completion_tokens'])} completion, {_count(u['total_tokens'])} total"
    if u["replies_without_usage"] and u["total_tokens"] is not None:
        tokens += f" (at least: {u['replies_without_usage']:,} of {u['replies']:,} answers reported no usage)"
    elif u["total_tokens"] is None:
        tokens += " (the endpoint reported no usage)"
    reused = f", {u['reused']:,} reused from stored answers" if u["reused"] else ""
    asked = "asked not recorded" if u["asked"] is None else f"{u['asked']:,} asked"
    if u["reused_earlier"]:
        asked += f"{', ' if asked else ''}{u['reused_earlier']:,} reused from earlier runs"
    asked = f"{asked}; " if asked else ""
    return f"llm: {asked}{u['calls']:,} calls, {u['retries']:,} retries{reused}; {tokens}"


def interrupted(run: JudgeRun) -> str:
    """What Ctrl-C left of a run (marked failed by run_judge_run): a judge that keeps its answers
    (the llm judge) resumes from them; the others stored nothing and start again."""
    if not keeps_answers(run.judge):
        return (
            f"Interrupted: {run.judge} judge run {run.pk} stopped and is marked failed; it stored no judgments "
            "(this judge keeps nothing to resume from): run the same command again to start a new run."
        )
    usage = run.llm_usage
    if "summaries" not in usage:
        return (
            f"Interrupted: judge run {run.pk} stopped before asking anything; run the same command again to resume it."
        )
    return (
        f"Interrupted: judge run {run.pk} stopped with {usage.get('answered', 0):,} of "
        f"{usage['summaries']:,} summaries answered; run the same command again to resume it."
    )


def _figure(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


class Command(BaseCommand):
    help = (
        "Judge every (summary, ACU) pair of a dataset with a machine judge, calibrate it by document-wise "
        "cross-validation against the human labels, store it as a machine round and print its figures."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--judge", required=True, choices=RUN_JUDGE_NAMES)
        parser.add_argument(
            "--model-dir", help="nli: a local model directory (e.g. a copy of shiyue/roberta-large-tac08)"
        )
        parser.add_argument(
            "--model-from",
            type=int,
            help="learned: judge with the model of this finished learned run (any dataset) instead of training",
        )
        parser.add_argument(
            "--cross-encoder",
            action="store_true",
            help="learned: stack a packed cross-encoder fine-tuned from the packaged all-MiniLM-L6-v2 on the labels, "
            "out of fold by document (the torch extras: requirements-ml.txt)",
        )
        parser.add_argument(
            "--ce-folds", type=int, help="with --cross-encoder: folds of documents, one model each (default 4)"
        )
        parser.add_argument("--ce-epochs", type=int, help="with --cross-encoder: training epochs (default 2)")
        parser.add_argument(
            "--time-budget",
            type=float,
            help="learned: seconds the training may take before the run fails (default JUDGE_TASK_TIME_LIMIT - 120: 3180)",
        )
        parser.add_argument(
            "--round", type=int, help="the human round to calibrate against (default: expert labels, else crowd)"
        )
        parser.add_argument(
            "--train-share",
            type=float,
            help="learned: train on the labels of this share of the labelled documents only (e.g. 0.1, a gold "
            "round's); triage's cross-fitted figures then leave those documents out",
        )
        parser.add_argument("--device", choices=("cpu", "cuda"), help="embedding and nli (default cpu)")
        parser.add_argument("--batch-size", type=int, help="embedding and nli: pairs per forward pass")
        parser.add_argument(
            "--resume",
            type=int,
            metavar="RUN",
            help="llm: resume this unfinished run (one still marked running whose process is gone: a crash)",
        )
        parser.add_argument(
            "--new",
            action="store_true",
            help="llm: start a new run even if a failed one with the same settings could be resumed (it still "
            "reuses stored answers: add --fresh-answers to ask every summary again)",
        )
        parser.add_argument(
            "--fresh-answers",
            action="store_true",
            help="llm: ask the endpoint for every summary, even those an earlier run has the answer for "
            "(e.g. to measure its run-to-run variance); by default those answers are reused, not paid again",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        dataset, label_round = dataset_and_round(options["name"], options["round"])
        for flag, key in (("ce_folds", "--ce-folds"), ("ce_epochs", "--ce-epochs")):
            if options[flag] is not None and not options["cross_encoder"]:
                raise CommandError(f"{key} goes with --cross-encoder.")
        if options["cross_encoder"] and options["model_from"] is not None:
            raise CommandError(
                "--cross-encoder trains a new model; --model-from reuses a run's (with its cross-encoder, if it has one)."
            )
        judge_options, others = sort_options(options["judge"], {k: options[k] for k in JUDGE_OPTIONS})
        for option in others:
            takers = judges_taking(option)
            raise CommandError(
                f"--{option.replace('_', '-')} is for the {' and '.join(takers)} judge{'s' if len(takers) > 1 else ''} only."
            )
        try:
            run = self._start(dataset, options, judge_options, label_round)
        except JudgeRunError as exc:
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:  # loading the judge, counting a resumed run's answers
            raise CommandError("Interrupted before the judge run started: nothing was changed.") from None
        try:
            run = run_judge_run(run.pk)
        except KeyboardInterrupt:  # run_judge_run marked it failed (unless it was already stored)
            run.refresh_from_db()
            if run.status != run.Status.DONE:
                raise CommandError(interrupted(run)) from None
        result = run_json(run)
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self._print(result)
        if run.status != run.Status.DONE:
            raise CommandError(f"Judge run {run.pk} failed: {run.error}")

    def _start(self, dataset, options, judge_options, label_round):
        """A new run, or the unfinished one these settings repeat (said on stderr with --json)."""
        if options["resume"] is not None and options["new"]:
            raise CommandError("--resume takes up a run; --new starts another: give one of them.")
        if options["resume"] is not None:
            run = JudgeRun.objects.filter(pk=options["resume"], batch__dataset=dataset).first()
            if run is None or run.judge != options["judge"]:
                raise CommandError(f"{dataset.name} has no {options['judge']} judge run {options['resume']}.")
            return self._resume(run, options)
        twin = (
            None
            if options["new"]
            else unfinished_twin(dataset, options["judge"], options=judge_options, label_round=label_round)
        )
        if twin is None:
            return start_judge_run(dataset, options["judge"], options=judge_options, label_round=label_round)
        if not resumable(twin):
            raise CommandError(
                f"Judge run {twin.pk} with the same settings is still marked {twin.status}. If nothing runs it any "
                f"more (a crashed command, a stopped worker), resume it with --resume {twin.pk}; --new starts "
                "another run (with --fresh-answers, one that asks every summary again)."
            )
        return self._resume(twin, options)

    def _resume(self, run, options):
        resume = resume_judge_run(run)
        if options["json"]:  # stdout is one JSON object
            self.stderr.write(resume.message(), style_func=lambda text: text)
        else:
            self.stdout.write(resume.message())
        return resume.run

    def _print(self, r):
        self.stdout.write(
            f"judge run {r['id']} (round {r['round']}): {r['judge']} v{r['version']} {r['model']}, "
            f"{r['pairs']} pairs, {r['status']}"
        )
        if r.get("llm"):
            self.stdout.write("  " + usage_line(r["llm"]))
        for name, c in (r["classification"] or {}).items():
            self.stdout.write(
                f"  vs {name:<7} accuracy {_figure(c['accuracy'])}  balanced {_figure(c['balanced_accuracy'])}"
                f"  AUC {_figure(c['auc'])}  kappa {_figure(c['kappa'])}  (n={c['n']}, out-of-fold)"
            )
        if r.get("trained_on"):
            t = r["trained_on"]
            oof = t.get("oof") or {}
            self.stdout.write(
                f"  model from run {t.get('run')} ({t.get('dataset')}, {t.get('pairs')} {t.get('labels')} pairs): "
                f"out-of-fold there AUC {_figure(oof.get('auc'))}, accuracy {_figure(oof.get('accuracy'))}"
            )
        corr = r["correlations"] or {}
        for level in ("summary", "system"):
            if level in corr:
                parts = [f"{m} {v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]" for m, v in corr[level].items()]
                self.stdout.write(f"  {level}-level: " + "; ".join(parts))
        self.stdout.write(f"  {r['ranking']['reason']}")
        for row in r["triage"] or []:
            self.stdout.write(
                f"  triage c={row['c']:g}: saved {row['saved_share']:.3f}, agreement {row['agreement']:.4f}, "
                f"system tau {_figure(row['system_kendall'], 3)}, max change {row['max_system_change']:.4f}"
            )
