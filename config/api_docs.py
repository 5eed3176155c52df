"""ReDoc served entirely from this site: the sidecar's bundle with its one remote image (a logo) pointed at a local copy."""

from functools import lru_cache

from django.contrib.staticfiles import finders
from django.http import Http404, HttpResponse
from django.templatetags.static import static
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from .api_errors import JSONErrorsMixin

BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
REMOTE_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@lru_cache(maxsize=1)
def _bundle(logo_url: str) -> bytes:
    path = finders.find(BUNDLE)
    if not path:
        raise Http404("ReDoc bundle missing: install drf-spectacular-sidecar.")
    with open(path, "rb") as f:
        return f.read().replace(REMOTE_LOGO.encode(), logo_url.encode())


class RedocBundle(JSONErrorsMixin, APIView):
    """ReDoc's script for /api/redoc/. Security behavior: like the docs, leads only (the default API permission)."""

    @extend_schema(exclude=True)
    def get(self, request):
        response = HttpResponse(
            _bundle(static("img/redoc-logo-mini.svg")), content_type="application/javascript; charset=utf-8"
        )
        response["Cache-Control"] = "private, max-age=86400"
        return response
