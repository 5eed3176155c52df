"""REST API for leads: crowd batches (list, create, status, cost, publish).

Thin views over `hits.batches` and `hits.tasks`, the services the batch pages use.
Security behavior: leads only (the default permission `IsLead`). Input outside the schema is a 400;
names the dataset lacks and refusals of the services (BatchError, ProviderError) are 422 JSON with
their message; publishing a batch that is not a draft is a 409.
"""

import hashlib
import json
import re

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dataset
from config.api_errors import Unprocessable, error_body, error_responses
from config.api_input import StrictInput, strict
from config.dispatch import dispatch
from config.json_body import BoundedJSONParser
from hits import selectors, tasks
from hits.api.batch_output import (  # noqa: F401 - re-exported
    AllocationSerializer,
    BatchDetailSerializer,
    BatchSerializer,
    BucketSerializer,
    PilotSerializer,
    ProgressSerializer,
    PublishProgressSerializer,
    SpendSerializer,
    batch_detail_data,
)
from hits.batch_fields import BatchSpec, batch_serializer_field, money_refusals
from hits.models import Batch
from hits.money import Bucket
from hits.money_fields import MoneyField
from hits.provider_interface import available_providers, chosen_currency, money_currency, provider_class
from hits.provider_interface.options import serializer_class
from hits.providers import sync as provider_sync
from hits.services import batches

MAX_ID = 2**63 - 1


# --- input -------------------------------------------------------------------------------------


MTurkOptionsSerializer = strict(serializer_class("MTurkOptionsSerializer", provider_class("mturk").options))
ProlificOptionsSerializer = strict(serializer_class("ProlificOptionsSerializer", provider_class("prolific").options))
PROVIDER_OPTIONS = {"mturk": MTurkOptionsSerializer, "prolific": ProlificOptionsSerializer}
# Every other provider with options: an object named after it (from its one option schema).
PROVIDER_OPTIONS.update(
    {
        name: strict(serializer_class(f"{name.title()}OptionsSerializer", provider_class(name).options))
        for name in available_providers()
        if name not in PROVIDER_OPTIONS and provider_class(name).options
    }
)


class BatchCreateInput(StrictInput, serializers.Serializer):
    dataset = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="The dataset's id.")
    name = batch_serializer_field("name")
    protocol = batch_serializer_field("protocol")
    instructions = batch_serializer_field("instructions")
    rating_round = batch_serializer_field("rating_round")
    provider = serializers.ChoiceField(choices=[], default="inhouse")
    assignments = batch_serializer_field("assignments")
    systems = serializers.ListField(
        child=serializers.CharField(max_length=200, allow_blank=True),  # blank: no such system (422)
        required=False,
        default=list,
        max_length=1000,
        help_text="System names of the dataset; empty: all systems.",
    )
    lifetime_hours = batch_serializer_field("lifetime_hours")
    assignment_minutes = batch_serializer_field("assignment_minutes")
    auto_approve_hours = batch_serializer_field("auto_approve_hours")
    qualification_test = serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        required=False,
        allow_null=True,
        default=None,
        help_text="A qualification test of the dataset, or one another dataset offers to its batches.",
    )
    gold_share = batch_serializer_field("gold_share")
    budget = batch_serializer_field("budget")
    allocation = batch_serializer_field("allocation")
    allocation_min = batch_serializer_field("allocation_min")
    allocation_max = batch_serializer_field("allocation_max")
    allocation_threshold = batch_serializer_field("allocation_threshold")
    allocation_max_sd = batch_serializer_field("allocation_max_sd")
    allocation_judge_run = batch_serializer_field("allocation_judge_run")
    triage_confidence = batch_serializer_field("triage_confidence")
    triage_when = batch_serializer_field("triage_when")
    triage_allow_not_for_ranking = batch_serializer_field("triage_allow_not_for_ranking")
    stop_after = batch_serializer_field("stop_after")
    # A ListField (not many=True): its length bounds reach the schema as minItems and maxItems.
    buckets = serializers.ListField(
        child=BucketSerializer(),
        required=False,
        min_length=1,
        max_length=100,
        help_text="Pay buckets by ACU count, their rewards in the batch's currency; default: RoSE's buckets, "
        "0.15 to 0.55 (RoSE paid $0.15 to $0.55).",
    )
    mturk = MTurkOptionsSerializer(required=False, help_text="Only with provider mturk.")
    prolific = ProlificOptionsSerializer(required=False, help_text="Only with provider prolific.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = [(p, p) for p in available_providers()]
        for name, options_class in PROVIDER_OPTIONS.items():
            if name not in self.fields:
                self.fields[name] = options_class(required=False, help_text=f"Only with provider {name}.")

    def validate(self, attrs):
        """An amount's bounds, said in the batch's currency (its provider's, with the options given),
        as the lead's form says them (`money_refusals`)."""
        provider = attrs.get("provider", "inhouse")
        refusals = money_refusals(attrs, chosen_currency(provider, attrs.get(provider)))
        if refusals:
            raise serializers.ValidationError({name: [message] for name, message in refusals.items()})
        return attrs

    def resolve(self) -> dict:
        """The validated input with its names and ids resolved to the dataset's rows, after the
        rules between fields: the schema cannot state these, so a miss is a 422 naming the field."""
        data = dict(self.validated_data)
        dataset = Dataset.objects.filter(pk=data["dataset"]).first()
        if dataset is None:
            raise Unprocessable({"dataset": [f"No dataset with id {data['dataset']}."]})
        data["dataset"] = dataset
        names = list(dict.fromkeys(data.get("systems") or []))
        systems = list(dataset.systems.filter(name__in=names))
        unknown = sorted(set(names) - {s.name for s in systems})
        if unknown:
            raise Unprocessable(
                {"systems": [f"Dataset {dataset.name!r} has no system {', '.join(map(repr, unknown))}."]}
            )
        data["systems"] = systems
        test_id = data.get("qualification_test")
        if test_id is not None:
            test = selectors.tests_for_batches(dataset).filter(pk=test_id).first()
            if test is None:
                raise Unprocessable(
                    {
                        "qualification_test": [
                            f"Dataset {dataset.name!r} has no qualification test {test_id} "
                            "(its own, or one another dataset offers to its batches)."
                        ]
                    }
                )
            data["qualification_test"] = test
        for name in PROVIDER_OPTIONS:
            if name in data and data["provider"] != name:
                raise Unprocessable({name: [f"{name} options need provider {name}."]})
        options_class = PROVIDER_OPTIONS.get(data["provider"])
        if options_class is None:
            data["provider_config"] = {}
        else:
            options = data.pop(data["provider"], None)
            if options is None:
                defaults = options_class(data={})
                defaults.is_valid(raise_exception=True)
                options = defaults.validated_data
            data["provider_config"] = dict(options)
        if "buckets" in data:
            data["buckets"] = [Bucket(b["min_acus"], b.get("max_acus"), b["reward"]) for b in data["buckets"]]
        return data


# --- views -------------------------------------------------------------------------------------

# 1 to 255 visible ASCII characters (a UUID, a job id): the key a client sends again with a retry.
IDEMPOTENCY_KEY = r"^[!-~]{1,255}$"
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    pattern=IDEMPOTENCY_KEY,
    description="Optional: a key of the client's (1-255 visible ASCII characters, e.g. a UUID). A request "
    "sent again with the same key and body (a retry after a timeout) is answered with the batch the first "
    "one made (201, header `Idempotent-Replayed: true`) instead of making another; the same key with "
    "another body is a 422 (`idempotency_key_reused`). Keys are the lead's own.",
)


def idempotency(request) -> tuple[str | None, str]:
    """The request's Idempotency-Key (None: not sent) and its body's digest (its JSON, keys sorted)."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not re.fullmatch(IDEMPOTENCY_KEY, key):
        raise serializers.ValidationError(
            {"Idempotency-Key": ["Send 1 to 255 visible ASCII characters (no spaces), e.g. a UUID."]}
        )
    body = json.dumps(request.data, sort_keys=True, separators=(",", ":"), default=str)
    return key, hashlib.sha256(body.encode()).hexdigest()


class DatasetFilter(serializers.Serializer):
    dataset = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, help_text="Only the batches of this dataset (its id)."
    )


@extend_schema(tags=["batches"])
class BatchListCreate(generics.ListAPIView):
    """Crowd batches and expert label rounds (imported or made here), oldest first; POST creates a draft batch."""

    serializer_class = BatchSerializer
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        query = DatasetFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        qs = selectors.batches_with_counts()
        if query.validated_data.get("dataset") is not None:
            qs = qs.filter(dataset_id=query.validated_data["dataset"])
        return qs

    @extend_schema(
        summary="List batches",
        parameters=[DatasetFilter],
        responses={200: BatchSerializer(many=True), **error_responses(400, 404)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="batches_create",
        summary="Create a draft batch",
        description="An ACU batch: one HIT per system summary of the dataset's approved references (with ACUs). "
        "A rating batch (protocol prior, ref_free or ref_based): one HIT per document, every summary of it "
        "rated 1-5, the ratings collected in the rating round named. Check the cost, then publish.",
        request=BatchCreateInput,
        parameters=[IDEMPOTENCY_HEADER],
        responses={
            201: BatchDetailSerializer,
            **error_responses(
                400,
                422,
                texts={
                    422: "Valid by the schema, but not for this dataset or these settings: a system, qualification "
                    "test or dataset it does not hold, provider options for another provider (code `unprocessable`, "
                    "with `fields`), or a rule between fields (code `refused`: pay buckets that overlap, allocation "
                    "bounds, no approved summary with ACUs to make HITs of, triage from a judge run marked not for "
                    "ranking without `triage_allow_not_for_ranking`), or an `Idempotency-Key` already used with "
                    "another body (code `idempotency_key_reused`)."
                },
            ),
        },
    )
    def post(self, request):
        key, body_digest = idempotency(request)
        form = BatchCreateInput(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.resolve()
        try:
            batch, made = batches.create_batch_once(
                key=key,
                body_digest=body_digest,
                dataset=data["dataset"],
                spec=BatchSpec.from_data(data, provider_config=data["provider_config"]),
                systems=data["systems"] or None,
                qualification_test=data["qualification_test"],
                created_by=request.user,
            )
        except batches.KeyReused as exc:
            body = error_body(str(exc), "idempotency_key_reused")
            return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        headers = {} if made else {"Idempotent-Replayed": "true"}
        return Response(batch_detail_data(batch.pk), status=status.HTTP_201_CREATED, headers=headers)


@extend_schema(tags=["batches"])
class BatchDetail(APIView):
    @extend_schema(
        summary="Show a batch: status, progress, publishing progress, last error",
        responses={200: BatchDetailSerializer, **error_responses(404)},
    )
    def get(self, request, batch_id: int):
        return Response(batch_detail_data(batch_id))


class BucketCostSerializer(serializers.Serializer):
    label = serializers.CharField()
    reward = MoneyField(max_digits=8)
    hits = serializers.IntegerField()
    assignments = serializers.IntegerField()
    rewards = MoneyField(max_digits=12)
    fees = MoneyField(max_digits=12)
    total = MoneyField(max_digits=12)


class SessionCostSerializer(serializers.Serializer):
    """`hits.provider_interface.base.SessionPrice`: the batch page's "pays per session" line."""

    sessions = serializers.IntegerField(help_text="Payments: the HITs' most places over K, rounded up.")
    hits_per_session = serializers.IntegerField(help_text="K, the HITs of one session.")
    reward = MoneyField(max_digits=8, help_text="One session's reward, paid whole.")
    fee = MoneyField(max_digits=8, help_text="The provider's fee on one session's reward, rounded once.")
    rewards = MoneyField(max_digits=12, help_text="sessions x reward: the estimate's `rewards`, but for `extras`.")
    fees = MoneyField(max_digits=12, help_text="sessions x fee: the estimate's `fees`, but for `extras`.")


class ExtraCostSerializer(serializers.Serializer):
    """`hits.provider_interface.base.ExtraCost`: a line of the batch page's cost table below the buckets."""

    label = serializers.CharField(help_text="What it pays for, e.g. a Prolific screening study.")
    places = serializers.IntegerField(help_text="Payments, at most.")
    reward = MoneyField(max_digits=8)
    fee = MoneyField(max_digits=8, help_text="The provider's fee on one reward.")
    rewards = MoneyField(max_digits=12)
    fees = MoneyField(max_digits=12)
    total = MoneyField(max_digits=12)
    note = serializers.CharField(help_text="How it is paid, and why `places` is at most.")


class CostSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    provider = serializers.CharField(help_text="The provider's label.")
    buckets = BucketCostSerializer(many=True)
    sessions = SessionCostSerializer(
        allow_null=True,
        help_text="A provider paying per session of several HITs (Prolific): the sessions its totals are; "
        "the buckets price each HIT at its own reward. Null for a provider paying per assignment.",
    )
    extras = ExtraCostSerializer(
        many=True,
        help_text="Costs beyond the HITs' places, counted in the totals: a Prolific batch's screening study "
        "when it has a qualification test.",
    )
    hits = serializers.IntegerField()
    assignments = serializers.IntegerField()
    rewards = MoneyField(max_digits=12, help_text="In `currency`, as a decimal string.")
    fees = MoneyField(max_digits=12)
    total = MoneyField(max_digits=12)
    currency = serializers.CharField(help_text="The currency of these amounts: USD, or a Prolific account's (GBP).")


@extend_schema(tags=["batches"])
class BatchCost(APIView):
    @extend_schema(
        summary="Cost estimate by pay bucket, with the provider's fees",
        responses={
            200: CostSerializer,
            **error_responses(400, 404, 409, texts={409: "The round is not a crowd batch (code `conflict`)."}),
        },
    )
    def get(self, request, batch_id: int):
        batch = get_object_or_404(Batch, pk=batch_id)
        if batch.kind != Batch.Kind.CROWD:
            return Response(
                error_body(
                    f"{batch.get_kind_display()} have no cost: this round is not a crowd batch.",
                    "conflict",
                    batch=batch.pk,
                ),
                status=status.HTTP_409_CONFLICT,
            )
        estimate = {"batch": batch.pk, **batches.cost_estimate(batch), "currency": money_currency(batch)}
        return Response(CostSerializer(estimate).data)


class PublishResultSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["published", "queued"])
    message = serializers.CharField()
    batch = BatchDetailSerializer()


@extend_schema(tags=["batches"])
class BatchPublish(APIView):
    @extend_schema(
        operation_id="batches_publish",
        summary="Publish a draft batch (or resume an interrupted publication)",
        description="200 when published in process; 202 when handed to the task queue (poll the batch for "
        "`status` and `publishing`); 409 when the batch is not a draft (already published, or a round that "
        "is not a crowd batch); 422 with the message when the provider or the batch refused (the batch "
        "stays resumable: publish again).",
        request=None,
        responses={
            200: PublishResultSerializer,
            202: PublishResultSerializer,
            **error_responses(
                400,
                404,
                409,
                422,
                texts={
                    409: "The batch is not a draft: already published, stopped or complete, or a round that is "
                    "not a crowd batch (code `conflict`).",
                    422: "The batch or its provider refused: no HITs, over its budget, the provider said no or "
                    "could not be reached (code `refused`; publish again to resume).",
                },
            ),
        },
    )
    def post(self, request, batch_id: int):
        batch = get_object_or_404(Batch, pk=batch_id)
        # The publishing task checks again; these checks answer at once when it would be queued.
        if batch.kind != Batch.Kind.CROWD:
            message = batches.NOT_PUBLISHABLE.format(kind=batch.get_kind_display())
            return Response(error_body(message, "conflict", batch=batch.pk), status=status.HTTP_409_CONFLICT)
        if batch.status not in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
            message = f"The batch is already {batch.get_status_display().lower()}."
            return Response(error_body(message, "conflict", batch=batch.pk), status=status.HTTP_409_CONFLICT)
        refused = batches.publish_refusal(batch)
        if refused:
            return Response(error_body(refused, "refused", batch=batch.pk), status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        ran, outcome = dispatch(tasks.publish_batch, batch.pk)
        if not ran:
            body = {
                "outcome": "queued",
                "message": "Publishing in the background; poll the batch for its progress.",
                "batch": batch_detail_data(batch.pk),
            }
            return Response(body, status=status.HTTP_202_ACCEPTED)
        if outcome != "published":
            body = error_body(str(outcome), "refused", batch=batch.pk)
            return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        body = {
            "outcome": "published",
            "message": "Published: workers can take its HITs now.",
            "batch": batch_detail_data(batch.pk),
        }
        return Response(body, status=status.HTTP_200_OK)


class SyncResultSerializer(serializers.Serializer):
    summary = serializers.CharField(help_text="What changed, for the lead.")
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Outcomes by kind (provider-specific).")
    batch = BatchDetailSerializer()


@extend_schema(tags=["batches"])
class BatchSync(APIView):
    @extend_schema(
        operation_id="batches_sync",
        summary="Sync the batch with its provider now",
        description="Runs the batch's provider sync at once (MTurk assignments, Prolific submissions; decisions taken "
        "at the provider reach the ledger once) and answers with what changed. In-house batches have "
        "nothing to sync. 422 with the provider's message when it refused or cannot be reached.",
        request=None,
        responses={
            200: SyncResultSerializer,
            **error_responses(
                400, 404, 422, texts={422: "The provider refused or could not be reached (code `refused`)."}
            ),
        },
    )
    def post(self, request, batch_id: int):
        batch = get_object_or_404(Batch, pk=batch_id)
        result = provider_sync.sync_batch(batch)
        counts = {k: v for k, v in result.items() if isinstance(v, int)}
        return Response({"summary": result["summary"], "counts": counts, "batch": batch_detail_data(batch.pk)})
