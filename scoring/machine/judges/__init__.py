"""Machine judges of ACU presence (lexical, learned, embedding, nli, llm) behind one interface
(base.Judge: fit, predict). The registry is the one place that knows a judge by its name."""

import inspect

from .base import Judge, JudgeUnavailable, Prediction, Work

JUDGE_NAMES = ("lexical", "learned", "embedding", "nli", "llm")
# The judges a new judge run may use. The embedding judge's best cosine (system-level Kendall 0.15
# on REALSumm) is not offered for judge runs any more: the same all-MiniLM-L6-v2 is used by the
# learned judge, fine-tuned as a cross-encoder (`cross_encoder=True`). The embedding judge stays a
# text-similarity measure for drafts (draft_report, the unit budget), and old embedding runs stay
# readable (and a queued one still runs).
RUN_JUDGE_NAMES = ("lexical", "learned", "nli", "llm")
RETIRED_FROM_RUNS = {
    "embedding": (
        "The embedding judge (best cosine, system-level Kendall 0.15 on REALSumm) is no longer offered for "
        "judge runs: use the learned judge with its cross-encoder (judge_dataset --judge learned --cross-encoder), "
        "which fine-tunes the same all-MiniLM-L6-v2."
    )
}


def judge_class(name: str) -> type[Judge]:
    """The class of a judge by its name (imported on first use: some need torch)."""
    if name == "lexical":
        from .lexical import LexicalJudge

        return LexicalJudge
    if name == "learned":
        from .learned import LearnedJudge

        return LearnedJudge
    if name == "embedding":
        from .embedding import EmbeddingJudge

        return EmbeddingJudge
    if name == "nli":
        from .nli import NLIJudge

        return NLIJudge
    if name == "llm":
        from .llm import LLMJudge

        return LLMJudge
    raise JudgeUnavailable(f"Unknown judge {name!r}: choose one of {', '.join(JUDGE_NAMES)}.")


def get_judge(name: str, **options) -> Judge:
    """A judge by name, with its options (e.g. `model_dir`, `device`, `batch_size` for nli).

    Raises JudgeUnavailable for an unknown name or invalid options; whether the judge can
    run here (packages, model files, endpoint) is `judge.available()`, and `judge.judge()`
    raises JudgeUnavailable with that reason when it cannot.
    """
    cls = judge_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise JudgeUnavailable(f"Invalid options for the {name} judge: {exc}") from None


def keeps_answers(name: str) -> bool:
    """Whether a judge keeps what each answer cost and resumes from its answers (the llm judge):
    a run of it without recorded usage is one stored before usage was recorded (hits 0028)."""
    return name in JUDGE_NAMES and judge_class(name).resumable


def option_names(name: str) -> tuple[str, ...]:
    """The options a judge takes: its constructor's keyword arguments (none for an unknown name)."""
    if name not in JUDGE_NAMES:
        return ()
    parameters = inspect.signature(judge_class(name).__init__).parameters.values()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in parameters if p.name != "self" and p.kind in keyword)


def judges_taking(option: str) -> list[str]:
    """The judges that take an option (for the message when another is given it)."""
    return [name for name in JUDGE_NAMES if option in option_names(name)]


def judge_options(name: str, given: dict) -> tuple[dict, list[str]]:
    """What a page, the API or `judge_dataset` gathered, sorted for judge `name`: (the options
    it takes, blank ones left out; the names of the non-blank ones it does not take)."""
    takes = option_names(name)
    filled = {k: v for k, v in given.items() if v not in (None, "", False)}
    return {k: v for k, v in filled.items() if k in takes}, [k for k in filled if k not in takes]


def run_judge(name: str, **options) -> Judge:
    """A judge a new judge run may use, with its options; JudgeUnavailable says why not (a judge
    retired from runs, an unknown one, invalid options, or one that cannot run here)."""
    if name in RETIRED_FROM_RUNS:
        raise JudgeUnavailable(RETIRED_FROM_RUNS[name])
    if name not in RUN_JUDGE_NAMES:
        raise JudgeUnavailable(f"Unknown judge {name!r}: choose one of {', '.join(RUN_JUDGE_NAMES)}.")
    judge = get_judge(name, **options)
    judge.require()
    return judge


def judge_availability() -> list[dict]:
    """Every judge offered for judge runs with whether it can run here and why not (for pages and
    the API); the learned judge's cross-encoder as `learned+cross_encoder`."""
    rows = []
    for name in RUN_JUDGE_NAMES:
        try:
            ok, why = get_judge(name).available()
        except JudgeUnavailable as exc:
            ok, why = False, str(exc)
        rows.append({"name": name, "available": ok, "reason": why})
    from .learned_models import cross_encoder_missing

    why = cross_encoder_missing()
    rows.append({"name": "learned+cross_encoder", "available": not why, "reason": why})
    return rows


__all__ = [
    "JUDGE_NAMES",
    "RUN_JUDGE_NAMES",
    "Judge",
    "JudgeUnavailable",
    "Prediction",
    "Work",
    "get_judge",
    "judge_availability",
    "judge_class",
    "judge_options",
    "judges_taking",
    "keeps_answers",
    "option_names",
    "run_judge",
]
