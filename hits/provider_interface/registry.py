"""Which crowd providers exist: `get_provider(name)` returns the one a batch uses.

The providers are named by dotted path, as Django names its backends: they live above the
services (hits/providers/), which reach them only through this registry. `load_all()` imports
each provider with its models (hits/providers/<name>/models.py), so Django finds the models when
the hits app loads (hits.apps.HitsConfig.import_models).
"""

from importlib import import_module
from importlib.util import find_spec
from types import SimpleNamespace

from django.utils.module_loading import import_string

from hits.provider_interface.base import CrowdProvider, ProviderError

_PROVIDERS: dict[str, str | type[CrowdProvider]] = {
    "inhouse": "hits.providers.inhouse.InHouseProvider",
    "mturk": "hits.providers.mturk.provider.MTurkProvider",
    "prolific": "hits.providers.prolific.provider.ProlificProvider",
    "panel": "hits.providers.panel.provider.PanelProvider",
}


def register(name: str, provider: type[CrowdProvider]) -> None:
    _PROVIDERS[name] = provider


def provider_class(name: str) -> type[CrowdProvider]:
    try:
        provider = _PROVIDERS[name]
    except KeyError:
        raise ProviderError(f"No crowd provider named {name!r} is available.") from None
    if isinstance(provider, str):
        provider = _PROVIDERS[name] = import_string(provider)
    return provider


def get_provider(name: str) -> CrowdProvider:
    return provider_class(name)()


def money_currency(batch) -> str:
    """The currency a batch's (or a batch spec's) rewards, bonuses, fees and budget are in: its
    provider's (a Prolific account's GBP); USD where no crowd provider pays (an expert or imported
    round). Every page, message and API figure of money reads it."""
    if batch.provider not in _PROVIDERS:
        return "USD"
    return get_provider(batch.provider).currency(batch)


def chosen_currency(provider: str, provider_config: dict | None) -> str:
    """`money_currency` of a batch not made yet, from its provider's name and the options chosen so
    far (the new batch form, the API's input): what its amounts' messages are said in."""
    return money_currency(SimpleNamespace(provider=provider, provider_config=dict(provider_config or {})))


def available_providers() -> list[str]:
    return sorted(_PROVIDERS)


def load_all() -> None:
    """Import every provider and its package's models module, if it has one."""
    for name, provider in list(_PROVIDERS.items()):
        if isinstance(provider, str):
            package = provider.rsplit(".", 2)[0] if provider.count(".") > 3 else None
            if package and find_spec(f"{package}.models"):
                import_module(f"{package}.models")
        provider_class(name)
