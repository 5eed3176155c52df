"""Which drafters exist: `get_drafter(name)` and the names usable now."""

from ..llm import llm_configured
from .base import Drafter, DrafterError
from .llm import LLMDrafter
from .rules import draft_reference


class RulesDrafter:
    """Clause and coordination splitting, reference by reference (`rules.draft_reference`); needs nothing."""

    name = "rules"
    whole_reference = True  # drafts a sentence with the names of the sentences before it

    def draft(self, sentences, context=None):
        return draft_reference(list(sentences))


def available_drafters() -> list[str]:
    """Drafter names usable now: `llm` only when the endpoint is configured."""
    return ["rules"] + (["llm"] if llm_configured() else [])


def get_drafter(name: str, **options) -> Drafter:
    if name == "rules":
        return RulesDrafter()
    if name == "llm":
        return LLMDrafter(**options)
    raise DrafterError(f"Unknown drafter “{name}”: use rules or llm.")
