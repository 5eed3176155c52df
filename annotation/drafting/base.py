"""The drafter interface: one reference's sentences in, draft ACUs per sentence out."""
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


class DrafterError(Exception):
    """A drafter could not run (not configured, unreachable, bad answer), with a message for the page."""


@dataclass(frozen=True)
class DraftContext:
    """What a drafter may use besides the sentences: the dataset's guidelines and a few approved
    ACUs of the same dataset as examples ([(sentence, [ACU texts])])."""

    guidelines: str = ""
    examples: Sequence[tuple[str, Sequence[str]]] = field(default_factory=tuple)


class Drafter(Protocol):
    name: str

    def draft(self, sentences: Sequence[str], context: DraftContext | None = None) -> list[list[str]]:
        """Draft ACU texts for each sentence, in order (one list per sentence)."""


class RulesDrafter:
    """Clause and coordination splitting (`rules.draft_sentence`); needs nothing."""

    name = "rules"

    def draft(self, sentences, context=None):
        from .rules import draft_sentence

        return [draft_sentence(s) for s in sentences]


def available_drafters() -> list[str]:
    """Drafter names usable now: `llm` only when the endpoint is configured."""
    from ..llm import llm_configured

    return ["rules"] + (["llm"] if llm_configured() else [])


def get_drafter(name: str, **options) -> Drafter:
    if name == "rules":
        return RulesDrafter()
    if name == "llm":
        from .llm import LLMDrafter

        return LLMDrafter(**options)
    raise DrafterError(f"Unknown drafter “{name}”: use rules or llm.")
