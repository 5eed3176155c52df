"""Which crowd providers exist: `get_provider(name)` returns the one a batch uses.

A provider's models (hits/providers/<name>/models.py) are imported here with it, so Django finds
them when the hits app loads its models (hits.apps.HitsConfig.import_models).
"""

from hits.providers.base import CrowdProvider, ProviderError
from hits.providers.inhouse import InHouseProvider
from hits.providers.mturk import models as mturk_models
from hits.providers.mturk.provider import MTurkProvider
from hits.providers.panel import models as panel_models
from hits.providers.panel.provider import PanelProvider
from hits.providers.prolific import models as prolific_models
from hits.providers.prolific.provider import ProlificProvider

PROVIDER_MODELS = (mturk_models, panel_models, prolific_models)

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
