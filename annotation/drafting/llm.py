"""The `llm` drafter: the machine judges' OpenAI-compatible endpoint writes draft ACUs, JSON out.

The prompt carries the dataset's guidelines and a few approved ACUs of the same dataset as
examples; the sentences of one reference go in one request (in chunks of `CHUNK`), numbered,
and the answer must be `{"sentences": [{"index": 1, "acus": ["...", ...]}, ...]}`.
"""

import json
import logging
from collections.abc import Sequence

from ..llm import LLMError, chat_json
from .base import DraftContext, DrafterError

logger = logging.getLogger(__name__)

CHUNK = 20  # sentences per request
MAX_ACUS = 12  # per sentence; more is a runaway answer

SYSTEM = (
    "You split reference summary sentences into Atomic Content Units (ACUs): short, self-contained "
    "facts, each checkable against a summary with yes or no. Follow the guidelines. Answer with JSON only: "
    '{"sentences": [{"index": <sentence number>, "acus": ["<ACU>", ...]}, ...]} with one entry per sentence.'
)


def build_messages(sentences: Sequence[str], context: DraftContext) -> list[dict]:
    """The chat messages for one chunk of sentences (pure, so the contract test can read them)."""
    parts = []
    if context.guidelines:
        parts.append("Guidelines:\n" + context.guidelines.strip())
    if context.examples:
        lines = []
        for sentence, acus in context.examples:
            lines.append(json.dumps({"sentence": sentence, "acus": list(acus)}, ensure_ascii=False))
        parts.append("Approved examples from this dataset:\n" + "\n".join(lines))
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, start=1))
    parts.append(f"Sentences:\n{numbered}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_answer(answer, count: int) -> list[list[str]]:
    """Drafts per sentence from the model's JSON; a sentence the model skipped gets none.
    Raises DrafterError when the answer does not have the asked shape."""
    items = answer.get("sentences") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise DrafterError('The language model did not answer with {"sentences": [...]}; no drafts were stored.')
    out: list[list[str]] = [[] for _ in range(count)]
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("acus"), list):
            raise DrafterError(
                'The language model\'s answer has a sentence without an "acus" list; no drafts were stored.'
            )
        index = item.get("index", position)
        if not isinstance(index, int) or not 1 <= index <= count:
            raise DrafterError(f"The language model answered for sentence {index!r}, which was not asked.")
        texts = [" ".join(str(t).split()) for t in item["acus"] if isinstance(t, str | int | float)]
        out[index - 1] = [t for t in texts if t][:MAX_ACUS]
    return out


class LLMDrafter:
    name = "llm"

    def __init__(self, temperature: float = 0.0, timeout: float | None = None, retries: int = 2):
        self.temperature, self.timeout, self.retries = temperature, timeout, retries

    def draft(self, sentences, context=None):
        context = context or DraftContext()
        drafts: list[list[str]] = []
        for start in range(0, len(sentences), CHUNK):
            chunk = list(sentences[start : start + CHUNK])
            try:
                answer = chat_json(
                    build_messages(chunk, context),
                    temperature=self.temperature,
                    timeout=self.timeout,
                    retries=self.retries,
                )
            except LLMError as exc:
                raise DrafterError(str(exc)) from None
            drafts.extend(parse_answer(answer, len(chunk)))
        logger.info("llm drafter: %d sentences, %d drafts", len(sentences), sum(map(len, drafts)))
        return drafts
