"""Admin for leads: stored scoring runs, read-only (runs are written by the scoring services)."""

from django.contrib import admin

from config.admin import ReadOnlyAdmin
from scoring.models import ScoringRun


@admin.register(ScoringRun)
class ScoringRunAdmin(ReadOnlyAdmin):
    list_display = ["pk", "dataset", "batch", "kind", "status", "trigger", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    exclude = ["outputs"]  # large; the dashboards and exports show it
