"""Admin for leads: browse crowd work. Batches, HITs, assignments, judgments and the ledger are
read-only here; their state changes are admin actions that call the services (so the ledger
and the provider hear of every change)."""

from django.contrib import admin, messages

from config.admin import ReadOnlyAdmin
from hits.providers.prolific.models import ProlificSession, ProlificStudy

from .models import HIT, Assignment, Batch, Judgment, LedgerEntry, PayBucket, ProviderCall, Worker
from .money import format_money
from .provider_interface import money_currency
from .services import batches, review


def in_currency(amount, batch) -> str:
    """An amount of `batch`'s money as its pages show it, in its provider's currency ("£0.25"), the
    admin's columns as the rest of the app (`hits.money.format_money`, `money_currency`)."""
    return format_money(amount, money_currency(batch))


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "provider", "user", "excluded", "blocked_at", "created_at"]
    list_filter = ["provider", "excluded"]
    search_fields = ["external_id"]
    readonly_fields = ["provider", "external_id", "excluded", "blocked_at", "block_reason"]


class PayBucketInline(admin.TabularInline):
    """A batch's pay buckets on its page, read-only (`batches.set_buckets` changes them)."""

    model = PayBucket
    fields = readonly_fields = ["min_acus", "max_acus", "reward_shown"]
    extra = 0
    can_delete = False

    @admin.display(description="Reward")
    def reward_shown(self, bucket):
        return in_currency(bucket.reward, bucket.batch)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(PayBucket)
class PayBucketAdmin(ReadOnlyAdmin):
    list_display = ["batch", "acus", "reward_shown", "external_type_id"]
    list_filter = ["batch"]
    list_select_related = ["batch"]
    fields = readonly_fields = ["batch", "min_acus", "max_acus", "reward_shown", "external_type_id"]

    @admin.display(description="ACUs")
    def acus(self, bucket):
        return bucket.label

    @admin.display(description="Reward", ordering="reward")
    def reward_shown(self, bucket):
        return in_currency(bucket.reward, bucket.batch)


@admin.register(Batch)
class BatchAdmin(ReadOnlyAdmin):
    list_display = ["name", "dataset", "kind", "provider", "status", "created_at"]
    list_filter = ["kind", "provider", "status"]
    inlines = [PayBucketInline]
    actions = ["stop_batches"]
    readonly_fields = ["budget_shown", "hourly_rate_shown"]
    SHOWN = {"budget": "budget_shown", "target_hourly_rate": "hourly_rate_shown"}  # money in its currency

    def get_fields(self, request, obj=None):
        fields = [f for f in super().get_fields(request, obj) if f not in self.readonly_fields]
        return [self.SHOWN.get(f, f) for f in fields]

    @admin.display(description="Budget")
    def budget_shown(self, batch):
        return in_currency(batch.budget, batch) if batch.budget is not None else "none"

    @admin.display(description="Target hourly rate")
    def hourly_rate_shown(self, batch):
        return in_currency(batch.target_hourly_rate, batch)

    @admin.action(description="Stop the selected batches (at the provider too)")
    def stop_batches(self, request, queryset):
        for batch in queryset:
            try:
                batches.stop_batch(batch)
            except batches.BatchError as exc:
                self.message_user(request, f"{batch}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{batch}: stopped.")

    def has_change_permission(self, request, obj=None):
        return obj is None  # the action form needs the changelist; no row can be edited


@admin.register(HIT)
class HITAdmin(ReadOnlyAdmin):
    list_display = ["pk", "batch", "summary", "max_assignments"]
    list_filter = ["batch"]
    raw_id_fields = ["summary"]


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["pk", "hit", "worker", "status", "confirmed", "submitted_at"]
    list_filter = ["status", "hit__batch"]
    raw_id_fields = ["hit", "worker"]
    actions = ["approve_assignments"]

    @admin.action(description="Approve the selected submitted assignments (pays each once)")
    def approve_assignments(self, request, queryset):
        done, errors = review.bulk(review.approve, list(queryset.values_list("pk", flat=True)), by=request.user)
        self.message_user(request, f"Approved {done}.")
        for error in errors[:20]:
            self.message_user(request, error, messages.ERROR)

    def has_change_permission(self, request, obj=None):
        return obj is None


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["pk", "assignment", "acu", "present"]
    raw_id_fields = ["assignment", "acu"]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "kind", "amount_shown", "worker", "batch", "key"]
    list_filter = ["kind", "batch"]
    list_select_related = ["worker", "batch"]
    raw_id_fields = ["worker", "assignment", "batch"]

    @admin.display(description="Amount", ordering="amount")
    def amount_shown(self, entry):
        return in_currency(entry.amount, entry.batch)


@admin.register(ProviderCall)
class ProviderCallAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "action", "target", "ok", "batch"]
    list_filter = ["ok", "action"]


@admin.register(ProlificStudy)
class ProlificStudyAdmin(ReadOnlyAdmin):
    list_display = ["study_id", "kind", "batch", "status", "hits_per_session", "places", "reward_cents"]
    list_filter = ["kind", "status"]


@admin.register(ProlificSession)
class ProlificSessionAdmin(ReadOnlyAdmin):
    list_display = ["session_id", "worker", "batch", "size"]
    raw_id_fields = ["worker", "batch"]
