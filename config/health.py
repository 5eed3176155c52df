"""The container's health check (docker-compose.yml: GET http://127.0.0.1:8000/healthz/).

First of all middleware, so it answers before the host is validated and before the HTTPS
redirect: the check comes from inside the container, on plain HTTP, with `Host: 127.0.0.1:8000`,
whatever ALLOWED_HOSTS a lab sets (a site whose ALLOWED_HOSTS named only its domain was never
healthy, and Caddy, the worker and beat, which wait for it, never started)."""

from django.http import HttpResponse

HEALTH_PATH = "/healthz/"


class HealthCheckMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path == HEALTH_PATH and request.method in ("GET", "HEAD"):
            return HttpResponse("ok", content_type="text/plain")
        return self.get_response(request)
