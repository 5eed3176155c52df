"""REST API routes (under /api/): token, datasets, batches, results, exports, schema and docs.

Every endpoint is for leads (token or session authentication); see README "REST API".
"""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from .api_docs import RedocBundle
from .api_errors import JSONErrorsMixin, api_not_found


class SchemaView(JSONErrorsMixin, SpectacularAPIView):
    """The OpenAPI schema (YAML; `?format=json` for JSON)."""


class SwaggerView(JSONErrorsMixin, SpectacularSwaggerSplitView):
    """Browsable docs (Swagger UI, assets from drf-spectacular-sidecar); its set-up script is
    served as a file of its own, so the page needs no inline script (the CSP allows none)."""


class RedocView(JSONErrorsMixin, SpectacularRedocView):
    """Reference docs (ReDoc, assets from drf-spectacular-sidecar, no web fonts, no remote logo)."""

    template_name = "api/redoc.html"


urlpatterns = [
    # Each app's routes, by module path so that config imports no app (see the layers in README).
    path("", include("hits.api.urls")),
    path("", include("scoring.api_urls")),
    # OpenAPI schema and its browsable docs
    path("schema/", SchemaView.as_view(), name="api_schema"),
    path("docs/", SwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("redoc/", RedocView.as_view(url_name="api_schema"), name="api_redoc"),
    path("redoc/redoc.standalone.js", RedocBundle.as_view(), name="api_redoc_bundle"),
    # Anything else under /api/: a JSON 404
    re_path(r"^[\s\S]*$", api_not_found),  # any character, a newline (%0A) too
]
