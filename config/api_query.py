"""API query strictness: a query parameter the OpenAPI schema does not list for the operation is
a 400 naming it.

Bodies refuse unknown fields (config/api_input.py); a misspelt query parameter was ignored, so
`GET /api/datasets/1/scores/?rond=2` answered with the figures of every round, which a lab's
script could publish as one round's. The schema (drf-spectacular, built once a process) is the
one list of what each operation takes, so a parameter documented is a parameter accepted.
"""

import re
from functools import lru_cache

from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission

_CONVERTER = re.compile(r"<(?:[^:>]+:)?([^>]+)>")


@lru_cache(maxsize=1)
def declared_parameters() -> dict[tuple[str, str], frozenset[str]]:
    """{(schema path, METHOD): the query parameter names the schema lists for it}."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        (path, method.upper()): frozenset(p["name"] for p in operation.get("parameters", []) if p.get("in") == "query")
        for path, operations in schema.get("paths", {}).items()
        for method, operation in operations.items()
    }


def unknown_parameters(request) -> list[str]:
    """The query parameter names of `request` its operation does not take (none for a view the
    schema leaves out)."""
    match = getattr(request, "resolver_match", None)
    if match is None or not request.query_params:
        return []
    path = "/" + _CONVERTER.sub(r"{\1}", match.route)
    known = declared_parameters().get((path, request.method))
    if known is None:
        return []
    return sorted(name for name in request.query_params if name not in known)


class KnownQueryParameters(BasePermission):
    """After IsLead (an anonymous caller learns nothing): unknown query parameters are a 400."""

    def has_permission(self, request, view) -> bool:
        unknown = unknown_parameters(request)
        if unknown:
            path = "/" + _CONVERTER.sub(r"{\1}", request.resolver_match.route)
            known = sorted(declared_parameters()[(path, request.method)])
            hint = (
                f"Unknown query parameter; this takes {', '.join(known)}."
                if known
                else ("Unknown query parameter; this takes none.")
            )
            raise ValidationError({name: [hint] for name in unknown})
        return True
