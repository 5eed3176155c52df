"""Admin for leads: stored scoring runs, read-only (runs are written by the scoring services)."""

from django.contrib import admin

from scoring.models import ScoringRun


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "dataset", "batch", "kind", "status", "trigger", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    exclude = ["outputs"]  # large; the dashboards and exports show it

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
