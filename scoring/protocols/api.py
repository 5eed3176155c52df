"""REST route of the Protocols page: a rating round's comparison as JSON (leads only, as every API route)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dataset
from config.api_errors import error_responses

from . import cached
from .selectors import pick_round

MAX_ID = 2**63 - 1


class ProtocolQuery(serializers.Serializer):
    rating_round = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, help_text="A rating round's id; default: the latest."
    )
    power = serializers.BooleanField(
        required=False, default=False, help_text="Also the power analysis per protocol (seconds)."
    )


@extend_schema(tags=["results"])
class DatasetProtocols(APIView):
    @extend_schema(
        summary="RoSE §5 protocol comparison of a rating round",
        parameters=[ProtocolQuery],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 404)},
    )
    def get(self, request, dataset_id: int):
        dataset = get_object_or_404(Dataset, pk=dataset_id)
        query = ProtocolQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        asked = query.validated_data.get("rating_round")
        round_ = pick_round(dataset, asked)
        if round_ is None:
            raise NotFound(
                f"Dataset {dataset.name!r} has no rating round {asked}."
                if asked is not None
                else f"Dataset {dataset.name!r} has no rating round yet: import ratings or create a rating batch first."
            )
        if cached.too_large(round_):
            raise serializers.ValidationError(
                {"rating_round": f"over {cached.MAX_RATINGS} ratings: use the protocol_report command"}
            )
        report = dict(cached.figures(round_))
        report["power"] = cached.power(round_, compute=query.validated_data["power"])
        return Response(report)
