"""REST API for leads: what a batch reads as (its list entry, its detail with progress, spend,
allocation and pilot), the output half of hits/api/batches.py."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api_input import StrictInput
from hits import selectors
from hits.allocation import service as allocation
from hits.batch_fields import QUALITY_AND_ALLOCATION
from hits.models import Batch
from hits.money_fields import MoneyField
from hits.provider_interface import money_currency
from hits.selectors import figures
from hits.services import batches, triage_when

# --- output ------------------------------------------------------------------------------------


class ProgressSerializer(serializers.Serializer):
    places = serializers.IntegerField(
        help_text="The HITs' opened places: assignments per HIT, or the places an adaptive batch opened so far."
    )
    done = serializers.IntegerField(help_text="Submitted or approved assignments.")
    in_progress = serializers.IntegerField(help_text="Places held within their deadline.")
    overdue = serializers.IntegerField(help_text="Places held past their deadline (counted as left).")
    left = serializers.IntegerField(help_text="Places neither done nor in progress.")
    rejected = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField(), help_text="Assignments per status.")
    percent = serializers.FloatField()
    per_hour = serializers.IntegerField(help_text="Submissions in the last hour.")
    eta = serializers.DateTimeField(
        allow_null=True,
        help_text="Estimated finish at the last hour's rate; null when the batch is not handed out, or when it "
        "cannot finish by itself (open places no worker left may take: the batch page says why).",
    )


class PublishProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="HITs created at the provider so far.")
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class BucketSerializer(StrictInput, serializers.Serializer):
    min_acus = serializers.IntegerField(min_value=1, max_value=100_000)
    max_acus = serializers.IntegerField(
        min_value=1,
        max_value=100_000,
        allow_null=True,
        required=False,
        default=None,
        help_text="Empty: no upper bound (only the last bucket).",
    )
    reward = MoneyField(
        max_digits=6,
        min_value=0,
        help_text="Per HIT, in the batch's currency (USD; GBP for a Prolific account in GBP).",
    )


class SpendSerializer(serializers.Serializer):
    rewards = MoneyField(help_text="Rewards recorded in the ledger, as a decimal string.")
    bonuses = MoneyField()
    fees = MoneyField()
    total = MoneyField()
    budget = MoneyField(allow_null=True, help_text="The batch's budget; null: none.")
    budget_left = MoneyField(allow_null=True, help_text="The budget minus the total; null: no budget.")
    currency = serializers.CharField(
        help_text="The currency of these amounts (and of the batch's rewards): USD, or a Prolific account's (GBP)."
    )


class PilotSerializer(serializers.Serializer):
    hits = serializers.IntegerField(help_text="The pilot's HITs: the batch's first, worked at its assignments per HIT.")
    needed = serializers.IntegerField(help_text="How many of them must be complete before they set the threshold.")
    places = serializers.IntegerField(help_text="The places each pilot HIT (and every HIT before the threshold) gets.")
    threshold = serializers.FloatField(
        allow_null=True, help_text="The summary-level threshold the complete pilot HITs set; null: not yet."
    )


class AllocationSerializer(serializers.Serializer):
    hits = serializers.IntegerField()
    places = serializers.IntegerField(help_text="Places opened, over all HITs.")
    extra_places = serializers.IntegerField(help_text="Places opened beyond each HIT's first ones.")
    fixed_places = serializers.IntegerField(help_text="HITs x assignments per HIT: what fixed allocation buys.")
    settled_hits = serializers.IntegerField(help_text="HITs whose last decision found every ACU settled.")
    saved = MoneyField(max_digits=12, help_text="Rewards and fees saved against fixed (negative: spent more).")
    pilot = PilotSerializer(
        allow_null=True,
        help_text="The pilot that sets the summary-level threshold when allocation_max_sd is empty (30+ HITs); "
        "null: no pilot.",
    )


class BatchSerializer(serializers.ModelSerializer):
    hits = serializers.IntegerField(
        source="n_hits", read_only=True, help_text="The batch's HITs as it was made: one per summary."
    )
    follow_up_hits = serializers.IntegerField(
        source="n_follow_ups", read_only=True, help_text="A pairs batch's follow-up HITs (its later places) so far."
    )
    budget = MoneyField(
        max_digits=10, read_only=True, allow_null=True, help_text="In the batch's `currency`; null: no budget."
    )

    class Meta:
        model = Batch
        fields = [
            "id",
            "dataset",
            "name",
            "kind",
            "protocol",
            "rating_round",
            "provider",
            "status",
            "assignments_per_hit",
            "hits",
            "follow_up_hits",
            *QUALITY_AND_ALLOCATION,
            "created_at",
            "published_at",
            "expires_at",
            "last_error",
        ]
        read_only_fields = fields


class BatchDetailSerializer(BatchSerializer):
    systems = serializers.SerializerMethodField(help_text="System names; empty: all systems.")
    lifetime_hours = serializers.SerializerMethodField()
    assignment_minutes = serializers.SerializerMethodField()
    auto_approve_hours = serializers.SerializerMethodField()
    buckets = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    publishing = serializers.SerializerMethodField()
    spend = serializers.SerializerMethodField()
    allocation_figures = serializers.SerializerMethodField(help_text="An adaptive batch's figures; null: fixed.")
    gold_guard_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When an adaptive or pairs batch's gold guard made it stop saving (its rule agreed with the "
        "experts less than fixed places on its gold); null: it still saves, or it is fixed.",
    )
    gold_guard = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text="The gold guard's figures when it fired (gold pairs, both accuracies and judgments, the "
        "McNemar test's p and bound, the sentence the batch page shows); null: it never fired.",
    )
    triage = serializers.SerializerMethodField(
        help_text="A pairs batch's triage held back until its gold round (triage_when spammers), in words: waiting "
        "(gold HITs done of all), on or off with the share of gold-judged workers at chance it read; null: none."
    )
    triage_decision = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text="What the held-back triage's decision read: share, at_chance, judged (workers with `after`+ gold "
        "judgments), threshold, gold_hits, trimmed_hits; null: not decided.",
    )
    currency = serializers.SerializerMethodField(
        help_text="The currency of the batch's amounts (budget, rewards, target rate, spend): USD, or a Prolific "
        "account's (GBP)."
    )

    class Meta(BatchSerializer.Meta):
        fields = BatchSerializer.Meta.fields + [
            "currency",
            "systems",
            "lifetime_hours",
            "assignment_minutes",
            "auto_approve_hours",
            "qualification_test",
            "provider_config",
            "target_hourly_rate",
            "buckets",
            "progress",
            "publishing",
            "spend",
            "allocation_figures",
            "gold_guard_at",
            "gold_guard",
            "triage_state",
            "triage",
            "triage_decided_at",
            "triage_decision",
        ]
        read_only_fields = fields

    def get_triage(self, batch) -> str | None:
        return triage_when.state_text(batch)

    def get_currency(self, batch) -> str:
        return money_currency(batch)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_systems(self, batch) -> list[str]:
        return list(batch.systems.order_by("name").values_list("name", flat=True))

    def get_lifetime_hours(self, batch) -> float:
        return batch.lifetime_seconds / 3600

    def get_assignment_minutes(self, batch) -> float:
        return batch.assignment_duration_seconds / 60

    def get_auto_approve_hours(self, batch) -> float:
        return batch.auto_approve_seconds / 3600

    @extend_schema_field(BucketSerializer(many=True))
    def get_buckets(self, batch) -> list[dict]:
        return BucketSerializer(
            [{"min_acus": b.min_acus, "max_acus": b.max_acus, "reward": b.reward} for b in batch.buckets.all()],
            many=True,
        ).data

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, batch) -> dict:
        return ProgressSerializer(figures.batch_progress(batch)).data

    @extend_schema_field(PublishProgressSerializer)
    def get_publishing(self, batch) -> dict:
        return batches.publish_progress(batch)

    @extend_schema_field(AllocationSerializer(allow_null=True))
    def get_allocation_figures(self, batch) -> dict | None:
        figures = allocation.figures(batch)
        return None if figures is None else AllocationSerializer(figures).data

    @extend_schema_field(SpendSerializer)
    def get_spend(self, batch) -> dict:
        paid = figures.batch_spend(batch)
        return SpendSerializer(
            {
                "rewards": paid["reward"],
                "bonuses": paid["bonus"],
                "fees": paid["fee"],
                "total": paid["total"],
                "budget": paid["budget"],
                "budget_left": paid["budget_left"],
                "currency": paid["currency"],
            }
        ).data


def batch_detail_data(batch_id: int) -> dict:
    return BatchDetailSerializer(get_object_or_404(selectors.batches_with_counts(), pk=batch_id)).data
