"""REST API for machine rounds: list and start a dataset's judge runs, read one with its figures.

Thin over scoring/machine/runs.py (the same service as `judge_dataset` and the dataset page).
Security behavior: leads only (the default permission `IsLead`).
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dataset
from config.api_errors import error_body, error_responses
from config.api_input import StrictInput
from hits.models import Batch, JudgeRun
from scoring.machine.background import run_state, start_or_resume, start_run
from scoring.machine.judges import JUDGE_NAMES, judge_options
from scoring.machine.runs import JudgeRunError

MAX_ID = 2**63 - 1


def _interval(help_text: str, **options) -> serializers.ListField:
    """[value, low, high]: a figure with its 95% bootstrap interval over documents."""
    child = serializers.FloatField(allow_null=True)
    return serializers.ListField(child=child, min_length=3, max_length=3, help_text=help_text, **options)


class CrossfitCriteriaSerializer(serializers.Serializer):
    min_agreement = serializers.FloatField(help_text="Agreement with the human labels a fold's c must keep.")
    max_system_change = serializers.FloatField(help_text="The largest change of a system's score it may cause.")
    grid = serializers.ListField(child=serializers.FloatField(), help_text="The confidences c tried.")


class CrossfitFoldSerializer(serializers.Serializer):
    fold = serializers.IntegerField()
    c = serializers.FloatField(
        allow_null=True, help_text="The c chosen on the other folds; null: none kept the criteria."
    )
    chosen_on = serializers.ListField(child=serializers.IntegerField(), help_text="Document ids c was chosen on.")
    applied_to = serializers.ListField(child=serializers.IntegerField(), help_text="Document ids c was applied to.")
    saved_share = serializers.FloatField(help_text="Share of this fold's pairs the machine decides.")


class CrossfitHeldOutSerializer(serializers.Serializer):
    saved_share = _interval("Share of crowd judgments saved, held out.")
    agreement = _interval("Agreement of the combined labels with the human labels.")
    max_system_change = _interval("Largest change of any system's score.")
    system_kendall = _interval("System-level Kendall tau; null with fewer than 20 systems.", allow_null=True)
    documents = serializers.IntegerField()
    systems = serializers.IntegerField()
    pairs = serializers.IntegerField()


class TriageCrossfitSerializer(serializers.Serializer):
    criteria = CrossfitCriteriaSerializer()
    folds = CrossfitFoldSerializer(many=True)
    held_out = CrossfitHeldOutSerializer()
    left_out_documents = serializers.IntegerField(
        help_text="Documents the judge trained on, left out of these figures."
    )


class TriageSuggestionSerializer(serializers.Serializer):
    c = serializers.FloatField(
        allow_null=True, help_text="The confidence to triage at; null: the judge decides nothing."
    )
    documents = serializers.IntegerField(help_text="The documents it was chosen on.")
    pairs = serializers.IntegerField()
    decided_share = serializers.FloatField(help_text="The share of those pairs the judge decides at c.")
    criteria = serializers.DictField(help_text="min_agreement and max_system_change of the choice.")
    chosen_on = serializers.CharField(help_text="The documents the judge trained on, or every labelled document.")


class LLMUsageSerializer(serializers.Serializer):
    calls = serializers.IntegerField(help_text="HTTP requests sent to the endpoint, over every start of the run.")
    retries = serializers.IntegerField(help_text="Requests beyond a summary's first (timeouts, 429/5xx, bad JSON).")
    replies = serializers.IntegerField(help_text="Answers received.")
    replies_without_usage = serializers.IntegerField(help_text="Answers without a `usage`: their tokens are unknown.")
    prompt_tokens = serializers.IntegerField(
        allow_null=True, help_text="Summed over the answers that reported it; null: none did (unknown, not zero)."
    )
    completion_tokens = serializers.IntegerField(allow_null=True)
    total_tokens = serializers.IntegerField(allow_null=True)
    summaries = serializers.IntegerField(allow_null=True, help_text="Summaries (questions) of the run.")
    answered = serializers.IntegerField(help_text="Summaries answered so far in the current pass.")
    reused = serializers.IntegerField(
        help_text="Of those, answered from the answers this run asked for in an earlier pass (a resumed run)."
    )
    asked = serializers.IntegerField(
        allow_null=True,
        help_text="Summaries this run asked the endpoint for and got an answer, over all its passes (null: not "
        "recorded, a run from before usage was recorded taken up again, until its pass begins).",
    )
    reused_earlier = serializers.IntegerField(
        help_text="Summaries answered by copying the answer an earlier run (of any dataset) got for the very same "
        "question (same model, endpoint, temperature, prompt and texts): not asked, not paid again."
    )
    resumed = serializers.IntegerField(help_text="Times the run was resumed.")


class JudgeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    round = serializers.IntegerField(help_text="The machine round (a batch of kind machine) holding its judgments.")
    judge = serializers.ChoiceField(choices=JUDGE_NAMES)
    model = serializers.CharField(allow_blank=True)
    params = serializers.DictField()
    version = serializers.IntegerField(help_text="Its number among the dataset's runs of this judge.")
    judge_version = serializers.CharField(allow_blank=True, help_text="The version of the judge's code.")
    status = serializers.ChoiceField(
        choices=[*JudgeRun.Status.values, "stopped"],
        help_text="stopped: left to a background thread of the embedded server, which stopped during the run.",
    )
    progress = serializers.FloatField()
    pairs = serializers.IntegerField()
    pairs_done = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)
    label_round = serializers.IntegerField(allow_null=True)
    calibration = serializers.DictField(help_text="Logistic fit, its target labels and the document folds.")
    classification = serializers.DictField(
        allow_null=True, help_text="Out-of-fold accuracy, balanced accuracy, AUC, kappa per label set."
    )
    correlations = serializers.DictField(
        allow_null=True, help_text="Summary- and system-level correlations with the human scores, [value, low, high]."
    )
    systems = serializers.DictField(allow_null=True, help_text="Per system: machine and human score, raw judge scores.")
    triage = serializers.ListField(child=serializers.DictField(), allow_null=True, help_text="The triage grid over c.")
    triage_saved = serializers.DictField(
        allow_null=True, help_text="The triage row saving most while the system-level Kendall tau stays >= 0.95."
    )
    triage_crossfit = TriageCrossfitSerializer(
        allow_null=True,
        help_text="Triage's confidence chosen out of sample (issue 43): per fold the c chosen on the other folds' "
        "documents and applied to that fold's, and the held-out figures with 95% bootstrap intervals over documents; "
        "null without human labels on at least two documents the judge did not train on (or a run stored before).",
    )
    triage_suggestion = TriageSuggestionSerializer(
        allow_null=True,
        help_text="The confidence to triage new documents at (issue 43; a pairs batch's triage_confidence): the "
        "smallest c keeping agreement with the expert labels at least 0.97, chosen on the documents with "
        "out-of-fold probabilities (a learned judge's training documents, else every labelled document); null "
        "without human labels (or a run stored before).",
    )
    ranking = serializers.DictField(
        help_text='for_ranking: false ("not for ranking", refused for triage) when the system-level Kendall CI '
        "includes 0; null when not measured."
    )
    trained_on = serializers.DictField(
        allow_null=True, help_text="learned, reused model: its training set and out-of-fold figures there."
    )
    fitted = serializers.DictField(
        allow_null=True, help_text="learned: the fitted model (features, coefficients, training size and figures)."
    )
    seconds = serializers.FloatField(allow_null=True)
    llm = LLMUsageSerializer(
        allow_null=True,
        help_text="llm: what the run asked and spent (null for the other judges and for an llm run stored before "
        "its usage was recorded). Its answers are stored as "
        "they arrive: starting the same run again (same dataset, model, prompt, options and round) after it "
        "failed or stopped resumes it and asks only the summaries without an answer; a new run reuses the "
        "answers earlier runs got for the very same questions (`reused_earlier`) unless started with "
        "`fresh_answers`.",
    )


class StartJudgeRunSerializer(StrictInput, serializers.Serializer):
    judge = serializers.ChoiceField(choices=JUDGE_NAMES)
    model_dir = serializers.CharField(
        required=False, allow_blank=True, max_length=1000, help_text="nli: a local model directory on the server."
    )
    device = serializers.ChoiceField(choices=["cpu", "cuda"], required=False, default="cpu")
    model_from = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="learned: reuse the model of this finished learned run.",
    )
    cross_encoder = serializers.BooleanField(
        required=False,
        default=False,
        help_text="learned: stack a packed cross-encoder (all-MiniLM-L6-v2 fine-tuned out of fold; the torch extras).",
    )
    fresh_answers = serializers.BooleanField(
        required=False,
        default=False,
        help_text="llm: ask the endpoint for every summary, even those an earlier run has the answer for (to "
        "measure its run-to-run variance); by default those answers are reused, not paid again.",
    )
    round = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="The human round to calibrate against (default: expert labels, else crowd).",
    )


@extend_schema(tags=["machine judges"])
class DatasetJudgeRuns(generics.GenericAPIView):
    """A dataset's judge runs, newest first, paginated as every list (all of them, page by page)."""

    serializer_class = JudgeRunSerializer

    @extend_schema(
        summary="The dataset's judge runs, newest first",
        responses={200: JudgeRunSerializer(many=True), **error_responses(400, 404)},
    )
    def get(self, request, dataset_id: int):
        dataset = get_object_or_404(Dataset, pk=dataset_id)
        page = self.paginate_queryset(JudgeRun.objects.filter(batch__dataset=dataset).order_by("-created_at", "-pk"))
        return self.get_paginated_response(JudgeRunSerializer([run_state(r) for r in page], many=True).data)

    @extend_schema(
        summary="Start a judge run (a machine round)",
        description="201 when it ran in process (no broker), 202 when queued (poll the run for `progress`); "
        "an llm run repeating a failed or stopped one with the same settings resumes that one (its `llm.resumed` "
        "counts up, and only the summaries without a stored answer are asked), and is refused (422) while that "
        "one still runs; "
        "400 when the input is outside the schema, 422 when the judge cannot run here (missing packages or "
        "model, no endpoint) or the dataset has nothing for it to judge.",
        request=StartJudgeRunSerializer,
        responses={
            201: JudgeRunSerializer,
            202: JudgeRunSerializer,
            **error_responses(
                400,
                404,
                422,
                texts={
                    422: "The judge cannot run here (its packages, model or LLM endpoint are missing on this "
                    "server; a `model_from` run that is not a finished learned run) or the dataset has no ACUs "
                    "(code `refused`)."
                },
            ),
        },
    )
    def post(self, request, dataset_id: int):
        dataset = get_object_or_404(Dataset, pk=dataset_id)
        body = StartJudgeRunSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        label_round = None
        if data.get("round") is not None:
            label_round = Batch.objects.filter(pk=data["round"], dataset=dataset).first()
            if label_round is None:
                return Response(
                    error_body(f"Dataset {dataset.name!r} has no round {data['round']}.", "not_found"), status=404
                )
        # Each judge takes its own options; those it does not take are left out.
        options, _ = judge_options(
            data["judge"],
            {k: data.get(k) for k in ("model_dir", "device", "model_from", "cross_encoder", "fresh_answers")},
        )
        try:
            run, _ = start_or_resume(
                dataset, data["judge"], options=options, label_round=label_round, user=request.user
            )
        except JudgeRunError as exc:
            return Response(error_body(str(exc), "refused"), status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        ran = start_run(run)
        run.refresh_from_db()
        return Response(
            JudgeRunSerializer(run_state(run)).data, status=status.HTTP_201_CREATED if ran else status.HTTP_202_ACCEPTED
        )


@extend_schema(tags=["machine judges"])
class JudgeRunDetail(APIView):
    @extend_schema(
        summary="One judge run with its progress and figures",
        responses={200: JudgeRunSerializer, **error_responses(404)},
    )
    def get(self, request, run_id: int):
        run = get_object_or_404(JudgeRun, pk=run_id)
        return Response(JudgeRunSerializer(run_state(run)).data)
