"""Admin for leads: browse and fix annotation data (judged ACUs stay read-only)."""

from django.contrib import admin

from .models import ACU, Dataset, Document, Reference, ReferenceSentence, Summary, System


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "source_format", "length_alpha", "created_at"]
    search_fields = ["name"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "position"]
    list_filter = ["dataset"]
    search_fields = ["external_id"]


class SentenceInline(admin.TabularInline):
    model = ReferenceSentence
    extra = 0


@admin.register(Reference)
class ReferenceAdmin(admin.ModelAdmin):
    list_display = ["document", "status", "word_count"]
    list_filter = ["status", "document__dataset"]
    raw_id_fields = ["document"]
    inlines = [SentenceInline]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset"]
    list_filter = ["dataset"]


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["document", "system", "word_count"]
    list_filter = ["system__dataset"]
    raw_id_fields = ["document", "system"]


@admin.register(ACU)
class ACUAdmin(admin.ModelAdmin):
    list_display = ["text", "reference", "status", "author", "updated_at"]
    list_filter = ["status", "reference__document__dataset"]
    search_fields = ["text"]
    raw_id_fields = ["reference", "sentence", "author"]

    def get_readonly_fields(self, request, obj=None):
        # A judged ACU's text is frozen: its judgments mean exactly that text.
        if obj is not None and obj.judgments.exists():
            return ["text", "reference", "sentence"]
        return []
