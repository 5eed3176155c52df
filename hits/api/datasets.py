"""REST API for leads: datasets (list, detail, import upload) and the token endpoint.

Thin views over the services the pages use (`importing.import_dataset`,
`uploads.import_upload`). Security behavior: leads only (the default permission
`IsLead`), except the token endpoint, which checks the posted credentials and then the role.
"""

from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.utils.decorators import method_decorator
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, parsers, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.importing import DatasetExists, DatasetImportError
from annotation.models import ACU, Dataset, Document, Summary, System
from annotation.uploads import FORMAT_CHOICES, upload_too_large
from config import lockout
from config.api_errors import error_body, error_responses
from config.api_input import StrictInput
from config.api_permissions import IsLead
from config.json_body import BoundedJSONParser
from config.limits import large_upload
from config.roles import LEAD, has_role
from hits.models import Batch
from hits.services.dataset_import import import_upload

# --- token -----------------------------------------------------------------------------------


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")


class Credentials(StrictInput, AuthTokenSerializer):
    """A username and password; the username folded as the sign-in page folds it (NFKC)."""

    # Blank after trimming matches no account: a 401 as any other wrong username, not a 400.
    username = serializers.CharField(label="Username", write_only=True, allow_blank=True)

    def validate_username(self, value: str) -> str:
        return lockout.fold_username(value)


def _wrong_credentials(errors) -> bool:
    """The credentials matched no account (AuthTokenSerializer's `authorization` refusal), as
    opposed to a body that is no object of credentials at all (a JSON list, string or null: a 400)."""
    return set(errors) == {"non_field_errors"} and all(
        getattr(error, "code", None) == "authorization" for error in errors["non_field_errors"]
    )


WRONG_CREDENTIALS = "Unable to log in with provided credentials: the username and password match no active account."


class LeadAuthToken(APIView):
    """Trade a lead's username and password for their API token (the same token every time).
    Locked out after repeated failures like the sign-in page (django-axes, config/lockout.py)."""

    authentication_classes: list = []  # credentials come in the body; no session, no CSRF
    permission_classes = [AllowAny]
    throttle_classes: list = []
    parser_classes = [BoundedJSONParser, parsers.FormParser, parsers.MultiPartParser]

    @extend_schema(
        operation_id="token_create",
        summary="Get your API token",
        tags=["auth"],
        request=Credentials,
        responses={
            200: TokenSerializer,
            **error_responses(
                400,
                401,
                403,
                429,
                auth=False,
                texts={
                    400: "A username or password missing or outside the schema (`fields` names it).",
                    401: "The username and password do not match an active account (code `invalid_credentials`).",
                    403: "The account is not a lead's.",
                },
            ),
        },
        auth=[],
    )
    def post(self, request):
        serializer = Credentials(data=request.data, context={"request": request})
        if not serializer.is_valid():
            # NOTE: axes marks the request it was given, here DRF's (the middleware sees Django's).
            if getattr(request, "axes_locked_out", False):
                wait = lockout.retry_after(request)
                message = lockout.message(wait)
                return Response(
                    {"ok": False, "error": message, "detail": message, "code": "locked_out"},
                    status=status.HTTP_429_TOO_MANY_REQUESTS,
                    headers={"Retry-After": str(wait)},
                )
            if _wrong_credentials(serializer.errors):
                # Both fields were well formed, so the credentials themselves were wrong.
                return Response(
                    error_body(WRONG_CREDENTIALS, "invalid_credentials"), status=status.HTTP_401_UNAUTHORIZED
                )
            raise serializers.ValidationError(serializer.errors)
        user = serializer.validated_data["user"]
        if not has_role(user, LEAD):
            raise PermissionDenied(IsLead.message)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


# --- datasets --------------------------------------------------------------------------------


def _count(queryset, outer: str):
    """A correlated COUNT subquery (no row multiplication, unlike several joined Counts)."""
    counted = queryset.filter(**{outer: OuterRef("pk")}).order_by().values(outer).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def datasets_with_counts():
    return Dataset.objects.annotate(
        n_documents=_count(Document.objects.all(), "dataset"),
        n_systems=_count(System.objects.all(), "dataset"),
        n_summaries=_count(Summary.objects.all(), "document__dataset"),
        n_acus=_count(ACU.objects.all(), "reference__document__dataset"),
        n_rounds=_count(Batch.objects.all(), "dataset"),
    ).order_by("name")


class DatasetSerializer(serializers.ModelSerializer):
    documents = serializers.IntegerField(source="n_documents", read_only=True)
    systems = serializers.IntegerField(source="n_systems", read_only=True)
    summaries = serializers.IntegerField(source="n_summaries", read_only=True)
    acus = serializers.IntegerField(source="n_acus", read_only=True)
    rounds = serializers.IntegerField(
        source="n_rounds", read_only=True, help_text="Crowd batches and imported label rounds."
    )

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "description",
            "source_format",
            "length_alpha",
            "created_at",
            "documents",
            "systems",
            "summaries",
            "acus",
            "rounds",
        ]
        read_only_fields = fields


class SystemRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class RoundRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Pass it as `?round=` to the results and export endpoints.")
    name = serializers.CharField()
    kind = serializers.CharField(help_text="crowd or imported")
    status = serializers.CharField()
    provider = serializers.CharField()


class DatasetDetailSerializer(DatasetSerializer):
    system_list = serializers.SerializerMethodField()
    round_list = serializers.SerializerMethodField()

    class Meta(DatasetSerializer.Meta):
        fields = DatasetSerializer.Meta.fields + ["system_list", "round_list"]
        read_only_fields = fields

    @extend_schema_field(SystemRefSerializer(many=True))
    def get_system_list(self, dataset) -> list[dict]:
        return [{"id": s.pk, "name": s.name} for s in dataset.systems.order_by("name")]

    @extend_schema_field(RoundRefSerializer(many=True))
    def get_round_list(self, dataset) -> list[dict]:
        return [
            {"id": b.pk, "name": b.name, "kind": b.kind, "status": b.status, "provider": b.provider}
            for b in dataset.batches.order_by("pk")
        ]


@extend_schema(tags=["datasets"])
class DatasetList(generics.ListAPIView):
    """All datasets with their counts, by name."""

    serializer_class = DatasetSerializer

    def get_queryset(self):
        return datasets_with_counts()

    @extend_schema(summary="List datasets", responses={200: DatasetSerializer(many=True), **error_responses(400, 404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


@extend_schema(tags=["datasets"])
class DatasetDetail(generics.RetrieveAPIView):
    """One dataset: counts, its systems and its rounds (crowd batches and imported labels)."""

    serializer_class = DatasetDetailSerializer
    lookup_url_kwarg = "dataset_id"

    def get_queryset(self):
        return datasets_with_counts()

    @extend_schema(summary="Show a dataset", responses={200: DatasetDetailSerializer, **error_responses(404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class DatasetImportInput(StrictInput, serializers.Serializer):
    # Blank (after trimming) is valid by the schema: the import refuses a nameless dataset (422).
    name = serializers.CharField(
        max_length=100, allow_blank=True, help_text="A short unique name, e.g. realsumm or cnndm-test."
    )
    format = serializers.ChoiceField(
        choices=FORMAT_CHOICES,
        default="rose",
        help_text="rose: a RoSE JSONL file (.jsonl); pyramid: a pyramid folder as .zip or .tar.gz; "
        "rose-protocols: RoSE's protocol-comparison .json with its ratings.",
    )
    # An empty file is valid by the schema (a binary of any length): the import refuses it (422).
    file = serializers.FileField(allow_empty_file=True, help_text="The dataset file.")
    replace = serializers.BooleanField(
        default=False, help_text="Overwrite a dataset of the same name (refused when it holds crowd batches)."
    )

    def validate_file(self, upload):
        if refusal := upload_too_large(upload, "import_dataset"):
            raise serializers.ValidationError(refusal)
        return upload


class ImportResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    dataset = DatasetDetailSerializer()
    judgments = serializers.IntegerField(help_text="Imported judgments (0 without labels).")
    annotators = serializers.IntegerField()
    round = serializers.IntegerField(allow_null=True, help_text="The imported label round, if labels came with it.")


@method_decorator(large_upload, name="dispatch")
class DatasetImport(APIView):
    """Upload a dataset (multipart). All or nothing: a file whose contents are not a dataset is
    refused (422) with one message naming the file, the line and the problem, and nothing is written."""

    parser_classes = [parsers.MultiPartParser, parsers.FormParser]

    @extend_schema(
        operation_id="datasets_import",
        summary="Import a dataset (upload)",
        tags=["datasets"],
        request={"multipart/form-data": DatasetImportInput},
        responses={
            201: ImportResultSerializer,
            **error_responses(
                400,
                409,
                413,
                415,
                422,
                texts={
                    409: "A dataset of that name exists and `replace` was not set (code `conflict`).",
                    422: "The file's contents are not a dataset of its format (code `import_failed`, with the "
                    "`file` and `line` at fault); nothing was written.",
                },
            ),
        },
    )
    def post(self, request):
        form = DatasetImportInput(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            summary = import_upload(
                data["file"], name=data["name"], fmt=data["format"], replace=data["replace"], created_by=request.user
            )
        except DatasetExists as exc:
            message = f"Nothing was imported: {exc}. Choose another name, or send replace=true to overwrite it."
            return Response(error_body(message, "conflict"), status=status.HTTP_409_CONFLICT)
        except DatasetImportError as exc:
            body = error_body(f"Nothing was imported. {exc}", "import_failed", file=exc.file, line=exc.line)
            return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        dataset = get_object_or_404(datasets_with_counts(), pk=summary.dataset_id)
        result = {
            "message": str(summary),
            "dataset": DatasetDetailSerializer(dataset).data,
            "judgments": summary.judgments,
            "annotators": summary.annotators,
            "round": summary.batch_id,
        }
        return Response(result, status=status.HTTP_201_CREATED)
