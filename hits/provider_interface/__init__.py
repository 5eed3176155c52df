"""What the services know of a crowd provider: the interface (`base`, with the capabilities a
provider declares), the registry that finds a provider by name (`registry`) and the schema of a
provider's batch options (`options`). The providers themselves (hits/providers/) sit above the
services and import them; the services reach a provider only through this package, so there is
no import cycle between the two.
"""

from hits.provider_interface.base import Capability, CrowdProvider, ProviderError
from hits.provider_interface.registry import (
    available_providers,
    chosen_currency,
    get_provider,
    money_currency,
    provider_class,
    register,
)

__all__ = [
    "Capability",
    "CrowdProvider",
    "ProviderError",
    "available_providers",
    "chosen_currency",
    "get_provider",
    "money_currency",
    "provider_class",
    "register",
]
