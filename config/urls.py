"""URL routes of the whole site."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from .db_retry import retry_on_reconnect

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages without the icon link (e.g. a JSON response).
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("img/favicon.svg"))),
    # /healthz/, the container's health check, is answered by config.health's middleware.
    path("api/", include("config.api")),
    # Signing in again only sets the session again: retried after a dropped connection.
    # Its lockout: django-axes (config/lockout.py, settings AXES_*).
    path("accounts/login/", retry_on_reconnect(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("hits.urls")),
    path("", include("scoring.urls")),
    path("", include("annotation.urls")),
]
