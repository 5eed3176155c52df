"""Which crowd providers exist: `get_provider(name)` returns the one a batch uses."""

from hits.providers.base import CrowdProvider, ProviderError
from hits.providers.inhouse import InHouseProvider
from hits.providers.mturk.provider import MTurkProvider
from hits.providers.panel.provider import PanelProvider
from hits.providers.prolific.provider import ProlificProvider

_PROVIDERS: dict[str, type[CrowdProvider]] = {
    "inhouse": InHouseProvider,
    "mturk": MTurkProvider,
    "prolific": ProlificProvider,
    "panel": PanelProvider,
}


def register(name: str, provider: type[CrowdProvider]) -> None:
    _PROVIDERS[name] = provider


def provider_class(name: str) -> type[CrowdProvider]:
    try:
        return _PROVIDERS[name]
    except KeyError:
        raise ProviderError(f"No crowd provider named {name!r} is available.") from None


def get_provider(name: str) -> CrowdProvider:
    return provider_class(name)()


def available_providers() -> list[str]:
    return sorted(_PROVIDERS)
