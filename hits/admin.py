"""Admin for leads: browse crowd work."""
from django.contrib import admin

from .models import HIT, Assignment, Batch, Worker


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
