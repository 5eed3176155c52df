"""The LLM judge: an OpenAI-compatible chat model answers, per summary, which ACUs it states."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from annotation.llm import USAGE_KEYS, LLMAnswerError, LLMError, chat, llm_configured, llm_settings, parse_json_content

from .base import PREDICT_END, Judge, JudgeUnavailable, Prediction, Work, chunk_end

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


@dataclass
class Spend:
    """What asking the endpoint cost over a stretch of a run: HTTP requests (`calls`), those beyond
    the first of each question (`retries`: timeouts, 429/5xx, answers asked again), the answers
    received (`replies`) and those without a `usage` (unknown: not counted as zero), the token
    counts summed over the replies that gave them, and the summaries answered and reused."""

    calls: int = 0
    retries: int = 0
    replies: int = 0
    replies_without_usage: int = 0
    tokens: dict = field(default_factory=dict)
    answered: int = 0
    reused: int = 0

    def reply(self, usage: dict | None) -> None:
        self.replies += 1
        if usage is None:
            self.replies_without_usage += 1
            return
        for key in USAGE_KEYS:
            if key in usage:
                self.tokens[key] = self.tokens.get(key, 0) + usage[key]


@dataclass
class Question:
    """One request of the judge: the messages for a summary and its facts, the rows they answer,
    and `key`, the digest of all that determines the answer (model, endpoint, temperature, prompt
    version and the messages), under which a run stores it."""

    messages: list
    rows: list
    key: str


class LLMJudge(Judge):
    name = "llm"
    version = PROMPT_VERSION
    score_names = ("p",)
    calibration_scale = "logit"
    resumable = True

    def __init__(
        self, temperature: float = 0.0, retries: int = 2, timeout: float | None = None, fresh_answers: bool = False
    ):
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
        # Ask the endpoint again even where an earlier run has the answer (to measure its run-to-run
        # variance): a run option (JudgeRun.options), not a parameter: it changes no question's key.
        self.fresh_answers = bool(fresh_answers)

    def available(self) -> tuple[bool, str]:
        if not llm_configured():
            return False, "Set LLM_BASE_URL and LLM_MODEL (and LLM_API_KEY if needed) to use the llm judge."
        return True, ""

    def question(self, summary: str, acus: list[str], rows: list) -> Question:
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": _user_prompt(summary, acus)},
        ]
        determined_by = {"model": self.model, "params": self.params, "messages": messages}
        key = hashlib.sha256(json.dumps(determined_by, sort_keys=True).encode()).hexdigest()
        return Question(messages, rows, key)

    def questions(self, pairs, rows: range) -> list[Question]:
        """One question per summary (by id) of these rows of a run's pairs, in order."""
        groups: dict[int, list[int]] = {}
        for i in rows:
            groups.setdefault(int(pairs.summary[i]), []).append(i)
        return [
            self.question(pairs.summary_texts[s], [pairs.acu_texts[i] for i in members], members)
            for s, members in groups.items()
        ]

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        # One request per summary with all its ACUs, as a crowd worker sees them.
        groups: dict[str, list[int]] = {}
        for i, (_, summary) in enumerate(pairs):
            groups.setdefault(summary, []).append(i)
        values = np.empty(len(pairs), dtype=float)
        spend = Spend()
        for summary, indexes in groups.items():
            q = self.question(summary, [pairs[i][0] for i in indexes], indexes)
            values[indexes] = self._ask(q.messages, len(indexes), spend)[0]
        return {"p": values}

    def predict(self, work: Work) -> Prediction:
        """Every pair's P(present), a chunk of summaries at a time: a summary whose answer the run
        has stored (`work.answers`, an interrupted run resumed) is not asked again, nor one an
        earlier run got an answer for (copied into this run; unless `fresh_answers`); the answers
        a chunk received are stored with what they cost at its end, or when it fails midway."""
        pairs, n, store = work.pairs, len(work.pairs), work.answers
        values = np.empty(n, dtype=float)
        if store is not None:
            store.begin(len(set(pairs.summary.tolist())))
        start = 0
        while start < n:
            stop = chunk_end(pairs.summary, start)
            self._answer_chunk(self.questions(pairs, range(start, stop)), store, values)
            work.progress(PREDICT_END * stop / n, stop)
            start = stop
        return Prediction({"p": values})

    def _known(self, questions: list[Question], store, spend: Spend) -> dict[str, list[float]]:
        """The answers of these questions the run has already: its own (counted `reused` when it
        asked them itself) and, unless `fresh_answers`, earlier runs' (copied in by `borrow`)."""
        if store is None:
            return {}
        own = store.stored([q.key for q in questions])
        spend.reused += sum(1 for q in questions if q.key in own and own[q.key][1] is None)
        known = {key: p for key, (p, _) in own.items()}
        missing = list(dict.fromkeys(q.key for q in questions if q.key not in known))
        if missing and not self.fresh_answers:
            known.update(store.borrow(missing))
        return known

    def _answer_chunk(self, questions: list[Question], store, values: np.ndarray) -> None:
        spend = Spend()
        known = self._known(questions, store, spend)
        fresh: dict[str, tuple[list[float], dict | None, int]] = {}
        try:
            for q in questions:
                if q.key not in known and q.key not in fresh:
                    fresh[q.key] = self._ask(q.messages, len(q.rows), spend)
                values[q.rows] = known[q.key] if q.key in known else fresh[q.key][0]
                spend.answered += 1
        finally:
            if store is not None:
                store.store(fresh, spend)

    def _ask(self, messages: list[dict], count: int, spend: Spend) -> tuple[list[float], dict | None, int]:
        """P(present) per fact, the usage summed over the replies (None: none reported) and the
        requests it took; an answer that is not the JSON asked for is asked again, up to `retries`
        times (HTTP failures are retried by annotation.llm.chat)."""
        usage: dict | None = None
        requests = 0
        for attempt in range(self.retries + 1):
            try:
                reply = chat(
                    messages, temperature=self.params["temperature"], timeout=self.timeout, retries=self.retries
                )
            except LLMError as exc:
                spend.calls += exc.requests
                spend.retries += max(exc.requests - 1, 0) + (1 if attempt else 0)
                raise JudgeUnavailable(str(exc)) from None
            requests += reply.requests
            spend.calls += reply.requests
            spend.retries += reply.requests - 1 + (1 if attempt else 0)
            spend.reply(reply.usage)
            if reply.usage is not None:
                usage = usage or {}
                for key, value in reply.usage.items():
                    usage[key] = usage.get(key, 0) + value
            try:
                return parse_answers(parse_json_content(reply.content), count), usage, requests
            except LLMAnswerError as exc:
                if attempt == self.retries:
                    raise JudgeUnavailable(f"{exc} (asked {self.retries + 1} times)") from None
        raise JudgeUnavailable("The language model was not asked.")  # retries < 0
