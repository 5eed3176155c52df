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
