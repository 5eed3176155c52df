"""The LLM judge: an OpenAI-compatible chat model answers, per summary, which ACUs it states."""

import json
from collections.abc import Sequence

import numpy as np

from annotation.llm import LLMAnswerError, LLMError, chat_json, llm_configured, llm_settings

from .base import Judge, JudgeUnavailable

PROMPT_VERSION = "1"
SYSTEM_PROMPT = (
    "You check summaries against atomic facts. For each numbered fact, decide whether the summary "
    "states it (possibly in other words). Answer with JSON only: "
    '{"answers": [{"id": <number>, "present": true or false, "confidence": <0..1>}, ...]}, '
    "one entry per fact, where confidence is your probability that the fact is present."
)


def _user_prompt(summary: str, acus: list[str]) -> str:
    facts = "\n".join(f"{i + 1}. {text}" for i, text in enumerate(acus))
    return f"Summary:\n{summary}\n\nFacts:\n{facts}"


def _probability(entry) -> float | None:
    if not isinstance(entry, dict):
        return None
    confidence = entry.get("confidence", entry.get("probability"))
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and 0 <= confidence <= 1:
        return float(confidence)
    present = entry.get("present")
    if isinstance(present, bool):
        return 1.0 if present else 0.0
    return None


def parse_answers(answer, count: int) -> list[float]:
    """P(present) per fact from the model's JSON; a missing or unreadable fact is an error."""
    entries = answer.get("answers") if isinstance(answer, dict) else answer
    if not isinstance(entries, list):
        raise LLMAnswerError(f"The language model's JSON has no 'answers' list: {json.dumps(answer)[:200]}")
    by_id: dict[int, float] = {}
    for position, entry in enumerate(entries):
        p = _probability(entry)
        if p is None:
            continue
        ident = entry.get("id", position + 1)
        if isinstance(ident, str) and ident.strip().isdecimal():
            ident = int(ident)
        if isinstance(ident, int):
            by_id[ident] = p
    missing = [i for i in range(1, count + 1) if i not in by_id]
    if missing:
        raise LLMAnswerError(f"The language model gave no usable answer for facts {missing[:10]} of {count}.")
    return [by_id[i] for i in range(1, count + 1)]


class LLMJudge(Judge):
    name = "llm"
    version = PROMPT_VERSION
    score_names = ("p",)
    calibration_scale = "logit"

    def __init__(self, temperature: float = 0.0, retries: int = 2, timeout: float | None = None):
        settings = llm_settings()
        super().__init__(
            model=settings["model"],
            params={
                "base_url": settings["base_url"],
                "temperature": float(temperature),
                "prompt_version": PROMPT_VERSION,
            },
        )
        self.retries = int(retries)
        self.timeout = timeout

    def available(self) -> tuple[bool, str]:
        if not llm_configured():
            return False, "Set LLM_BASE_URL and LLM_MODEL (and LLM_API_KEY if needed) to use the llm judge."
        return True, ""

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        # One request per summary with all its ACUs, as a crowd worker sees them.
        groups: dict[str, list[int]] = {}
        for i, (_, summary) in enumerate(pairs):
            groups.setdefault(summary, []).append(i)
        values = np.empty(len(pairs), dtype=float)
        for summary, indexes in groups.items():
            acus = [pairs[i][0] for i in indexes]
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": _user_prompt(summary, acus)},
            ]
            values[indexes] = self._ask(messages, len(acus))
        return {"p": values}

    def _ask(self, messages: list[dict], count: int) -> list[float]:
        """P(present) per fact; an answer that is not the JSON asked for is asked again, up to
        `retries` times (HTTP failures are retried by chat_json)."""
        for attempt in range(self.retries + 1):
            try:
                answer = chat_json(
                    messages, temperature=self.params["temperature"], timeout=self.timeout, retries=self.retries
                )
                return parse_answers(answer, count)
            except LLMAnswerError as exc:
                if attempt == self.retries:
                    raise JudgeUnavailable(f"{exc} (asked {self.retries + 1} times)") from None
            except LLMError as exc:
                raise JudgeUnavailable(str(exc)) from None
        raise JudgeUnavailable("The language model was not asked.")  # retries < 0
