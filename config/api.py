"""REST API routes (under /api/): token, datasets, batches, results, exports, schema and docs.

Every endpoint is for leads (token or session authentication); see README "REST API".
"""
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from annotation import api as datasets
from hits import api as batches
from scoring import api as results
from scoring import judge_api as judges

from .api_errors import JSONErrorsMixin, api_not_found


class SchemaView(JSONErrorsMixin, SpectacularAPIView):
    """The OpenAPI schema (YAML; `?format=json` for JSON)."""


class SwaggerView(JSONErrorsMixin, SpectacularSwaggerView):
    """Browsable docs (Swagger UI, assets from drf-spectacular-sidecar)."""


class RedocView(JSONErrorsMixin, SpectacularRedocView):
    """Reference docs (ReDoc, assets from drf-spectacular-sidecar)."""


urlpatterns = [
    path("token/", datasets.LeadAuthToken.as_view(), name="api_token"),
    # Datasets
    path("datasets/", datasets.DatasetList.as_view(), name="api_datasets"),
    path("datasets/import/", datasets.DatasetImport.as_view(), name="api_dataset_import"),
    path("datasets/<int:dataset_id>/", datasets.DatasetDetail.as_view(), name="api_dataset"),
    # Results and exports of a dataset (?round=<batch id> for one round)
    path("datasets/<int:dataset_id>/scores/", results.DatasetScores.as_view(), name="api_scores"),
    path("datasets/<int:dataset_id>/agreement/", results.DatasetAgreement.as_view(), name="api_agreement"),
    path("datasets/<int:dataset_id>/workers/", results.DatasetWorkers.as_view(), name="api_workers"),
    path("datasets/<int:dataset_id>/exports/judgments.csv", results.JudgmentsCSV.as_view(), name="api_export_judgments"),
    path("datasets/<int:dataset_id>/exports/scores.csv", results.ScoresCSV.as_view(), name="api_export_scores"),
    path("datasets/<int:dataset_id>/exports/rose.jsonl", results.RoseJSONL.as_view(), name="api_export_rose"),
    # Machine judges (machine rounds)
    path("datasets/<int:dataset_id>/judge-runs/", judges.DatasetJudgeRuns.as_view(), name="api_judge_runs"),
    path("judge-runs/<int:run_id>/", judges.JudgeRunDetail.as_view(), name="api_judge_run"),
    # Batches
    path("batches/", batches.BatchListCreate.as_view(), name="api_batches"),
    path("batches/<int:batch_id>/", batches.BatchDetail.as_view(), name="api_batch"),
    path("batches/<int:batch_id>/cost/", batches.BatchCost.as_view(), name="api_batch_cost"),
    path("batches/<int:batch_id>/publish/", batches.BatchPublish.as_view(), name="api_batch_publish"),
    # OpenAPI schema and its browsable docs
    path("schema/", SchemaView.as_view(), name="api_schema"),
    path("docs/", SwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("redoc/", RedocView.as_view(url_name="api_schema"), name="api_redoc"),
    # Anything else under /api/: a JSON 404
    re_path(r"^.*$", api_not_found),
]
