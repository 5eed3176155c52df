"""REST API settings: token (and session) authentication, leads only, paginated lists,
JSON errors and the OpenAPI schema (drf-spectacular, assets served from the sidecar app).

config/settings.py takes REST_FRAMEWORK, SPECTACULAR_SETTINGS and the page sizes from here by
name. The apps the API needs are listed in settings.INSTALLED_APPS.
"""

from .env import env_int

API_PAGE_SIZE = 50
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 500)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # First, so an anonymous request gets 401 with `WWW-Authenticate: Token`.
        "rest_framework.authentication.TokenAuthentication",
        # A lead signed in on the site can use the docs page and its "Try it out".
        "rest_framework.authentication.SessionAuthentication",
    ],
    # IsLead first: an anonymous caller gets 401 before anything about its query (config/api_query.py).
    "DEFAULT_PERMISSION_CLASSES": ["config.api_permissions.IsLead", "config.api_query.KnownQueryParameters"],
    "DEFAULT_PAGINATION_CLASS": "config.api_pagination.LeadPagination",
    "PAGE_SIZE": API_PAGE_SIZE,
    # JSON only: every answer, error pages included, is JSON (downloads set their own type).
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "config.json_body.BoundedJSONParser",  # depth and size bounded (one JSON reader)
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api_errors.json_exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "ACU evaluation API",
    "DESCRIPTION": (
        "REST API for project leads: datasets (list, import), crowd batches (create, cost, publish, "
        "status), results (scores, agreement, workers) and exports.\n\n"
        "Authenticate with `Authorization: Token <key>` (POST your username and password to "
        "`/api/token/` to get the key) or with a signed-in lead's session. Only leads may use the API: "
        "other users get 403, anonymous requests 401. Every error is JSON: "
        '`{"error": "a clear message", ...}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and the docs pages are for leads, like the rest of the API.
    "SERVE_PERMISSIONS": ["config.api_permissions.IsLead"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No deep links: Swagger UI draws each operation's path as a link inside the button that opens
    # it, a control inside a control (axe-core: nested-interactive). No syntax colours: its theme's
    # red on grey is below WCAG AA contrast.
    "SWAGGER_UI_SETTINGS": {"deepLinking": False, "syntaxHighlight": False},
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Unknown input fields are refused (config/api_input.py): request bodies say so.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api_input.closed_request_bodies",
    ],
    # Batch.provider (every provider a worker can come from) vs. the crowd providers a batch can use.
    "ENUM_NAME_OVERRIDES": {
        "WorkerProviderEnum": "hits.models.Worker.Provider",
        "JudgeRunStatusEnum": "hits.models.JudgeRun.Status",
        "BatchStatusEnum": "hits.models.Batch.Status",
    },
}
