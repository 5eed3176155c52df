"""Machine judges of ACU presence (lexical, learned, embedding, nli, llm) behind one interface."""

from .base import Judge, JudgeUnavailable

JUDGE_NAMES = ("lexical", "learned", "embedding", "nli", "llm")
# The judges a new judge run may use. The embedding judge's best cosine (system-level Kendall 0.15
# on REALSumm) is not offered for judge runs any more: the same all-MiniLM-L6-v2 is used by the
# learned judge, fine-tuned as a cross-encoder (`cross_encoder=True`). The embedding judge stays a
# text-similarity measure for drafts (draft_report, the unit budget), and old embedding runs stay
# readable (and a queued one still runs).
RUN_JUDGE_NAMES = ("lexical", "learned", "nli", "llm")


def _judge_class(name: str) -> type[Judge]:
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
    cls = _judge_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise JudgeUnavailable(f"Invalid options for the {name} judge: {exc}") from None


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
    from .learned import cross_encoder_missing

    why = cross_encoder_missing()
    rows.append({"name": "learned+cross_encoder", "available": not why, "reason": why})
    return rows


__all__ = ["JUDGE_NAMES", "RUN_JUDGE_NAMES", "Judge", "JudgeUnavailable", "get_judge", "judge_availability"]
