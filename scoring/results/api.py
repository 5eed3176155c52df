"""REST API for leads: results of a dataset (scores, agreement, workers) and its exports.

Thin views over the services the dashboards and commands use (`dashboard.scores_run`,
`scores_json`, `selectors.alpha_trend`, the exporters). `?round=<batch id>` selects
one crowd batch or imported label round of the dataset (404 when it is not one of its rounds).
Security behavior: leads only (the default permission `IsLead`).
"""

import io
import tempfile

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.models import Dataset
from config.api_errors import JSONErrorsMixin, error_responses
from config.downloads import streamed_download
from hits.models import Batch
from hits.money_fields import MoneyField
from scoring.results.dashboard import ROSE_ALPHA, scores_run
from scoring.results.exports.names import download_name
from scoring.results.exports.rose import rose_lines
from scoring.results.exports.rounds import without_acu_labels
from scoring.results.exports.scores_json import scores_json
from scoring.results.exports.tables import write_judgments_csv, write_scores_csv
from scoring.runs.recompute import recompute_queued, request_recompute
from scoring.runs.selectors import alpha_trend

MAX_ID = 2**63 - 1


class RoundQuery(serializers.Serializer):
    round = serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        required=False,
        help_text="Only this round of the dataset: a crowd batch or an imported label round (its id). "
        "Default: all judgments of the dataset.",
    )


# The schema's query parameters are the validator itself (drf-spectacular explodes a serializer).
ROUND = RoundQuery


def dataset_and_round(request, dataset_id: int):
    """The dataset and the round `?round=` names (None: all rounds); 404 JSON if either is unknown."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    query = RoundQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    round_id = query.validated_data.get("round")
    if round_id is None:
        return dataset, None
    batch = Batch.objects.filter(pk=round_id, dataset=dataset).first()
    if batch is None:
        raise NotFound(f"Dataset {dataset.name!r} has no round {round_id} (a batch or an imported label set).")
    return dataset, batch


def labelled_round(request, dataset_id: int):
    """`dataset_and_round` of an export of ACU labels: a round without any (a machine round, a
    rating batch) is a 400 saying where its figures are, never a file without labels."""
    dataset, batch = dataset_and_round(request, dataset_id)
    refused = without_acu_labels(batch, api=True)
    if refused:
        raise ValidationError({"round": [refused]})
    return dataset, batch


class RunInfoSerializer(serializers.Serializer):
    dataset = serializers.IntegerField()
    round = serializers.IntegerField(allow_null=True)
    run = serializers.IntegerField(allow_null=True, help_text="The stored scoring run these figures come from.")
    run_at = serializers.DateTimeField(allow_null=True)
    stale = serializers.BooleanField(
        help_text="Judgments changed since the run; the write that changed them asked for a recompute."
    )


def _run_info(dataset, batch, run, stale) -> dict:
    return {
        "dataset": dataset.pk,
        "round": batch.pk if batch else None,
        "run": run.pk if run else None,
        "run_at": run.finished_at if run else None,
        "stale": stale,
    }


# --- scores --------------------------------------------------------------------------------------


class SystemScoreSerializer(serializers.Serializer):
    acu = serializers.FloatField(help_text="Mean ACU score over the system's judged documents.")
    acu_ci = serializers.ListField(
        child=serializers.FloatField(),
        allow_null=True,
        min_length=2,
        max_length=2,
        help_text="95% bootstrap CI over the system's judged documents (those of `acu`).",
    )
    normalized_acu = serializers.FloatField()
    normalized_acu_ci = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, min_length=2, max_length=2
    )
    length = serializers.FloatField(help_text="Mean summary length in words.")
    documents = serializers.IntegerField(
        required=False, help_text="Documents the system was judged on (n of its score and CI)."
    )


class AlphaSerializer(serializers.Serializer):
    acu_level = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha, nominal, per ACU.")
    summary_level = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha, interval, per summary.")


class CountsSerializer(serializers.Serializer):
    judgments = serializers.IntegerField()
    summaries = serializers.IntegerField()
    documents = serializers.IntegerField()
    complete_documents = serializers.IntegerField()
    systems = serializers.IntegerField()
    workers = serializers.IntegerField()


class PairwiseSerializer(serializers.Serializer):
    systems = serializers.ListField(child=serializers.CharField())
    p = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True)),
        help_text="Paired bootstrap p-values, systems x systems, on the documents both share "
        "(a tie counts against the row system).",
    )
    n = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        required=False,
        help_text="Documents each pair shares, systems x systems.",
    )
    p_holm = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True)),
        help_text="Holm-adjusted p-values, systems x systems: each pair's two-sided p (twice the smaller one-sided "
        "`p`) adjusted by Holm's step-down method over the `holm_pairs` pairs; `p_holm[A][B]` is the adjusted p "
        "that A is better than B (1 against the direction the data favour), null where `p` is.",
    )
    holm_pairs = serializers.IntegerField(help_text="The pairs with a test: the family `p_holm` is adjusted over.")


class AlphaUnitsSerializer(serializers.Serializer):
    acu_level = serializers.IntegerField(
        help_text="(Summary, ACU) pairs judged at least twice: the n of the ACU-level alpha."
    )
    summary_level = serializers.IntegerField(
        help_text="Summaries scored by at least two workers who judged all their ACUs: the n of the summary-level alpha."
    )


class ScoresSerializer(RunInfoSerializer):
    systems = serializers.DictField(child=SystemScoreSerializer(), help_text="By system name.")
    alpha = AlphaSerializer()
    alpha_units = AlphaUnitsSerializer(allow_null=True, help_text="The units behind each alpha (null: an older run).")
    counts = CountsSerializer()
    pairwise = PairwiseSerializer(allow_null=True)
    methods = serializers.JSONField(
        allow_null=True,
        help_text="What the figures are: the CIs' level, method and what they resample (documents), the paired "
        "test's sides, resamples and multiple comparisons (`p` uncorrected; `holm`: the Holm correction of "
        "`p_holm`), as the systems page states them.",
    )


EMPTY_COUNTS = {"judgments": 0, "summaries": 0, "documents": 0, "complete_documents": 0, "systems": 0, "workers": 0}


@extend_schema(tags=["results"])
class DatasetScores(APIView):
    @extend_schema(
        summary="System scores with 95% CIs, both alphas, paired p-values",
        parameters=[ROUND],
        responses={200: ScoresSerializer, **error_responses(400, 404)},
    )
    def get(self, request, dataset_id: int):
        dataset, batch = dataset_and_round(request, dataset_id)
        run, stale = scores_run(dataset, batch, parts=("systems", "alpha", "alpha_units", "counts", "pairwise"))
        body = _run_info(dataset, batch, run, stale)
        if run is None:
            body.update(
                systems={},
                alpha={"acu_level": None, "summary_level": None},
                alpha_units={"acu_level": 0, "summary_level": 0},
                counts=EMPTY_COUNTS,
                pairwise=None,
                methods=None,
            )
        else:
            result = scores_json(run)
            body.update(
                systems=result["systems"],
                alpha=result["alpha"],
                alpha_units=result["alpha_units"],
                counts=result["counts"],
                pairwise=result["pairwise"],
                methods=result["methods"],
            )
        return Response(ScoresSerializer(body).data)


class RecomputeSerializer(RunInfoSerializer):
    dispatched = serializers.BooleanField(
        help_text="This request dispatched the recompute; false when it joined one already queued."
    )
    queued = serializers.BooleanField(help_text="A recompute of this scope waits to run (false once it has started).")


@extend_schema(tags=["results"])
class DatasetRecompute(APIView):
    @extend_schema(
        summary="Ask for a recompute of the scores (coalesced with one already queued)",
        description="The write that made the scores stale has asked already; this asks again (the dashboard's "
        "*Recompute now*). 202 with the run state: `stale` until the recompute has run (poll the scores).",
        parameters=[ROUND],
        request=None,
        responses={202: RecomputeSerializer, **error_responses(400, 404)},
    )
    def post(self, request, dataset_id: int):
        dataset, batch = dataset_and_round(request, dataset_id)
        dispatched = request_recompute(dataset.pk, batch.pk if batch else None)
        run, stale = scores_run(dataset, batch, parts=())
        body = {
            **_run_info(dataset, batch, run, stale),
            "dispatched": dispatched,
            "queued": recompute_queued(dataset.pk, batch.pk if batch else None),
        }
        return Response(RecomputeSerializer(body).data, status=status.HTTP_202_ACCEPTED)


# --- agreement -----------------------------------------------------------------------------------


class TrendPointSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    at = serializers.DateTimeField()
    acu_level = serializers.FloatField(allow_null=True)
    summary_level = serializers.FloatField(allow_null=True)
    judgments = serializers.IntegerField(allow_null=True)


class AgreementSerializer(RunInfoSerializer):
    alpha = AlphaSerializer()
    alpha_units = AlphaUnitsSerializer(allow_null=True, help_text="The units behind each alpha (null: an older run).")
    alpha_without_flagged = AlphaSerializer(allow_null=True, help_text="Leaving out flagged and excluded workers.")
    flagged = serializers.IntegerField(help_text="Workers flagged on gold (failed gold).")
    rose_alpha = AlphaSerializer(help_text="RoSE's figures on CNN/DM, for comparison.")
    trend = TrendPointSerializer(many=True, help_text="Both alphas of the stored runs, oldest first.")


@extend_schema(tags=["results"])
class DatasetAgreement(APIView):
    @extend_schema(
        summary="Krippendorff's alpha now (with and without flagged workers) and over time",
        parameters=[ROUND],
        responses={200: AgreementSerializer, **error_responses(400, 404)},
    )
    def get(self, request, dataset_id: int):
        dataset, batch = dataset_and_round(request, dataset_id)
        run, stale = scores_run(dataset, batch, parts=("alpha", "alpha_units", "workers"))
        outputs = run.outputs if run else {}
        workers = outputs.get("workers") or {}
        body = {
            **_run_info(dataset, batch, run, stale),
            "alpha": outputs.get("alpha") or {"acu_level": None, "summary_level": None},
            "alpha_units": outputs.get("alpha_units") if run else {"acu_level": 0, "summary_level": 0},
            "alpha_without_flagged": workers.get("alpha_without_flagged"),
            "flagged": workers.get("flagged", 0),
            "rose_alpha": ROSE_ALPHA,
            "trend": alpha_trend(dataset, batch),
        }
        return Response(AgreementSerializer(body).data)


# --- workers -------------------------------------------------------------------------------------


class WorkerRowSerializer(serializers.Serializer):
    worker_id = serializers.IntegerField()
    worker = serializers.CharField(help_text="The worker's id at the provider.")
    provider = serializers.CharField()
    assignments = serializers.IntegerField()
    labels = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True, help_text="Agreement with the others' majority.")
    gold_accuracy = serializers.FloatField(allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True)
    hourly = MoneyField(
        allow_null=True,
        help_text="Effective pay per hour, as a decimal string with two places: the rewards of the worker's timed "
        "work paid here (crowd batches) over its active time, before fees, in the money its provider pays in "
        "(USD, or GBP for a Prolific account in pounds). Null when that work was paid in more than one "
        "currency: see hourly_rates.",
    )
    hourly_rates = serializers.DictField(
        child=MoneyField(),
        required=False,
        help_text='The effective pay per hour by the currency of the batches that paid the work ({"GBP": '
        '"9.00", "USD": "12.00"}): rates in different currencies are never summed.',
    )
    hourly_currency = serializers.CharField(
        allow_null=True,
        required=False,
        help_text="The worker's main currency: the one of most of their timed work here (the most active "
        "seconds). The workers page sorts its rate column on the rate in it (hourly_rates), so a worker "
        "paid in two currencies sorts among the others; null without timed paid work.",
    )
    flags = serializers.ListField(
        child=serializers.CharField(), help_text="failed gold (the upper 95% bound of gold accuracy below 0.7)"
    )
    notes = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="information only, never a flag: too fast, low agreement (with the others' majority)",
    )
    excluded = serializers.BooleanField()
    blocked = serializers.BooleanField()


@extend_schema(tags=["results"])
class DatasetWorkers(generics.GenericAPIView):
    """Per-worker statistics and quality flags of the latest scoring run, paginated."""

    serializer_class = WorkerRowSerializer

    @extend_schema(
        summary="Workers: agreement, gold accuracy, speed, pay and flags",
        parameters=[ROUND],
        responses={200: WorkerRowSerializer(many=True), **error_responses(400, 404)},
    )
    def get(self, request, dataset_id: int):
        dataset, batch = dataset_and_round(request, dataset_id)
        run, _ = scores_run(dataset, batch, parts=("workers",))
        rows = ((run.outputs.get("workers") or {}).get("rows") or []) if run else []
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(WorkerRowSerializer(page, many=True).data)


# --- exports -------------------------------------------------------------------------------------


class _Download(BaseRenderer):
    """Lets content negotiation accept the download's type (the views return the file themselves)."""

    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class CSVRenderer(_Download):
    media_type = "text/csv"
    format = "csv"


class JSONLinesRenderer(_Download):
    media_type = "application/x-ndjson"
    format = "jsonl"


class DownloadView(JSONErrorsMixin, APIView):
    """A file download; errors stay JSON whatever the Accept header asked for (JSON is among its
    renderers so that a client accepting only JSON still gets the file). `?format=` may name only
    the file's own format: any other, empty, unknown or `json` (the file is never JSON), is a 400
    naming it, once the caller is known."""

    def formats(self) -> list[str]:
        return [renderer.format for renderer in self.get_renderers() if isinstance(renderer, _Download)]

    def wrong_format(self, request) -> str:
        asked = request.query_params.get(api_settings.URL_FORMAT_OVERRIDE)
        if asked is None or asked in self.formats():
            return ""
        return f"Not one of {', '.join(self.formats())}: this download is always that file."

    def perform_content_negotiation(self, request, force=False):
        # A wrong format is refused by `initial`, after authentication (negotiation comes before it).
        return super().perform_content_negotiation(request, force=force or bool(self.wrong_format(request)))

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if wrong := self.wrong_format(request):
            raise ValidationError({"format": [wrong]})


def _csv_download(write, filename: str) -> FileResponse:
    """Write a CSV to a temporary file (memory stays flat at RoSE scale) and send it."""
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - the file outlives this function (streamed)
    text = io.TextIOWrapper(spool, encoding="utf-8", newline="")
    write(text)
    text.flush()
    text.detach()
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=filename, content_type="text/csv; charset=utf-8")


def _download_schema(operation_id: str, renderer: type[_Download], summary: str, description: str):
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        description=description,
        parameters=[
            ROUND,
            OpenApiParameter("format", str, enum=[renderer.format], description="The file's own format."),
        ],
        responses={
            (200, renderer.media_type): OpenApiResponse(OpenApiTypes.BINARY, description="The file, as an attachment."),
            **error_responses(400, 404, 406, json_key=True),
        },
    )


@extend_schema(tags=["exports"])
class JudgmentsCSV(DownloadView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @_download_schema(
        "datasets_export_judgments",
        CSVRenderer,
        "Raw judgments as CSV",
        "Columns: worker, example_id, system, acu_index, label (counted judgments only).",
    )
    def get(self, request, dataset_id: int):
        dataset, batch = labelled_round(request, dataset_id)
        return _csv_download(
            lambda out: write_judgments_csv(dataset, out, batch=batch), download_name(dataset, batch, "judgments.csv")
        )


@extend_schema(tags=["exports"])
class ScoresCSV(DownloadView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @_download_schema(
        "datasets_export_scores",
        CSVRenderer,
        "Per-summary scores as CSV",
        "Columns: example_id, system, acu, normalized_acu, summary_words (latest scoring run).",
    )
    def get(self, request, dataset_id: int):
        dataset, batch = dataset_and_round(request, dataset_id)
        run, _ = scores_run(dataset, batch, parts=())

        def write(out):
            if run is None:
                out.write("example_id,system,acu,normalized_acu,summary_words\r\n")
            else:
                write_scores_csv(run, out)

        return _csv_download(write, download_name(dataset, batch, "scores.csv"))


@extend_schema(tags=["exports"])
class RoseJSONL(DownloadView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @_download_schema(
        "datasets_export_rose",
        JSONLinesRenderer,
        "The dataset with its labels as RoSE JSONL",
        "One JSON object per document, as the import reads it (labels: majority of the counted judgments).",
    )
    def get(self, request, dataset_id: int):
        dataset, batch = labelled_round(request, dataset_id)
        return streamed_download(rose_lines(dataset, batch), download_name(dataset, batch, "rose.jsonl"), kind="ndjson")
