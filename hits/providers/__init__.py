"""Crowd providers as adapters: each talks to its service and returns facts.

`base` is the interface (with the capabilities a provider declares), `registry` finds a
provider by name, `inhouse` is our own crowd, and `mturk/` and `prolific/` each hold their
client, payloads, option schema, provider, sync, views and urls. The adapter modules never
import the services that call them (an import-linter contract).
"""

from hits.providers.base import Capability, CrowdProvider, ProviderError
from hits.providers.registry import available_providers, get_provider, provider_class, register

__all__ = [
    "Capability",
    "CrowdProvider",
    "ProviderError",
    "available_providers",
    "get_provider",
    "provider_class",
    "register",
]
