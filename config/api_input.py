"""API input: every write serializer under /api/ refuses fields it does not know.

A misspelt field (`pay_buckets` for `buckets`) silently ignored would publish a batch with
default pay; so a request naming a field the serializer does not take is a 400 that names it
(`StrictInput`, mixed into every input serializer, nested ones too), and the OpenAPI schema
says so (`additionalProperties: false` on every request body, `closed_request_bodies`).
"""

from collections.abc import Mapping

from rest_framework import serializers


def writable_fields(serializer: serializers.Serializer) -> list[str]:
    return [name for name, field in serializer.fields.items() if not field.read_only]


class StrictInput:
    """Mixed into a Serializer before it: unknown keys are a validation error naming each."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            known = writable_fields(self)  # type: ignore[arg-type]
            unknown = sorted(str(key) for key in data if key not in known)
            if unknown:
                hint = f"Unknown field; this object takes {', '.join(known)}."
                raise serializers.ValidationError({key: [hint] for key in unknown})
        return super().to_internal_value(data)  # type: ignore[misc]


def strict(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """A strict subclass of a serializer class made elsewhere (a provider's options)."""
    return type(serializer_class.__name__, (StrictInput, serializer_class), {"__module__": serializer_class.__module__})


NO_NUL = "^[^\\u0000]*$"


def _no_nul_in_strings(node) -> None:
    """Every free-text string of a request body says it holds no NUL: DRF's CharField refuses one
    (PostgreSQL cannot store it), so the schema must not offer it as valid."""
    if isinstance(node, dict):
        if node.get("type") == "string" and not {"pattern", "enum", "format"} & set(node):
            node["pattern"] = NO_NUL
        for value in node.values():
            _no_nul_in_strings(value)
    elif isinstance(node, list):
        for value in node:
            _no_nul_in_strings(value)


def closed_request_bodies(result, generator, request, public):
    """drf-spectacular postprocessing hook: request components admit no other property, and
    their free-text strings no NUL."""
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
            _no_nul_in_strings(component)
    return result
