"""Drafters: turn reference sentences into draft ACUs for authors (rules without a model, or an LLM)."""

from .base import DraftContext, Drafter, DrafterError
from .registry import DEFAULT_DRAFTER, available_drafters, get_drafter

__all__ = ["DEFAULT_DRAFTER", "DraftContext", "Drafter", "DrafterError", "available_drafters", "get_drafter"]
