"""Crowd providers behind one interface; `get_provider(name)` returns the one a batch uses."""
from .base import CrowdProvider, ProviderError
from .inhouse import InHouseProvider
from .mturk import MTurkProvider
from .prolific import ProlificProvider

_PROVIDERS: dict[str, type[CrowdProvider]] = {
    "inhouse": InHouseProvider, "mturk": MTurkProvider, "prolific": ProlificProvider,
}


def register(name: str, provider: type[CrowdProvider]) -> None:
    _PROVIDERS[name] = provider


def get_provider(name: str) -> CrowdProvider:
    try:
        return _PROVIDERS[name]()
    except KeyError:
        raise ProviderError(f"No crowd provider named {name!r} is available.") from None


def available_providers() -> list[str]:
    return sorted(_PROVIDERS)


__all__ = ["CrowdProvider", "ProviderError", "get_provider", "available_providers", "register"]
