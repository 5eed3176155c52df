"""Admin for leads: browse crowd work."""
from django.contrib import admin

from .models import HIT, Assignment, Batch, LedgerEntry, ProlificSession, ProlificStudy, ProviderCall, Worker


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "provider", "user", "created_at"]
    list_filter = ["provider"]
    search_fields = ["external_id"]


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "kind", "provider", "status", "created_at"]
    list_filter = ["kind", "provider", "status"]


@admin.register(HIT)
class HITAdmin(admin.ModelAdmin):
    list_display = ["pk", "batch", "summary", "max_assignments"]
    list_filter = ["batch"]
    raw_id_fields = ["summary"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["pk", "hit", "worker", "status", "submitted_at"]
    list_filter = ["status", "hit__batch"]
    raw_id_fields = ["hit", "worker"]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "amount", "worker", "batch", "key"]
    list_filter = ["kind", "batch"]
    raw_id_fields = ["worker", "assignment", "batch"]

    def has_change_permission(self, request, obj=None):
        return False  # money rows are written once by the services

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ProviderCall)
class ProviderCallAdmin(admin.ModelAdmin):
    list_display = ["created_at", "action", "target", "ok", "batch"]
    list_filter = ["ok", "action"]


@admin.register(ProlificStudy)
class ProlificStudyAdmin(admin.ModelAdmin):
    list_display = ["study_id", "kind", "batch", "status", "hits_per_session", "places", "reward_cents"]
    list_filter = ["kind", "status"]


@admin.register(ProlificSession)
class ProlificSessionAdmin(admin.ModelAdmin):
    list_display = ["session_id", "worker", "batch", "size"]
    raw_id_fields = ["worker", "batch"]
