"""Dataset pages (home, import, detail, documents, export) and the lead's dashboards."""

from django.urls import path

from scoring.drafts.unit_budget import views as budget_views
from scoring.machine import views as judge_views
from scoring.results.views import dashboards as views
from scoring.results.views import datasets
from scoring.results.views import protocols as protocol_views

urlpatterns = [
    path("", datasets.home, name="home"),
    path("datasets/", datasets.dataset_list, name="dataset_list"),
    path("datasets/import/", datasets.dataset_import, name="dataset_import"),
    path("datasets/<int:dataset_id>/", datasets.dataset_detail, name="dataset_detail"),
    path("datasets/<int:dataset_id>/export.jsonl", datasets.dataset_export, name="dataset_export"),
    path("datasets/<int:dataset_id>/documents/<int:document_id>/", datasets.document_detail, name="document_detail"),
    path("datasets/<int:dataset_id>/dashboard/", views.overview, name="dashboard"),
    path("datasets/<int:dataset_id>/dashboard/live.json", views.live, name="dashboard_live"),
    path("datasets/<int:dataset_id>/dashboard/recompute", views.recompute, name="dashboard_recompute"),
    path("datasets/<int:dataset_id>/dashboard/systems/", views.systems, name="dashboard_systems"),
    path("datasets/<int:dataset_id>/dashboard/workers/", views.workers, name="dashboard_workers"),
    path(
        "datasets/<int:dataset_id>/dashboard/workers/<int:worker_id>/<str:action>",
        views.worker_action,
        name="dashboard_worker_action",
    ),
    path("datasets/<int:dataset_id>/dashboard/metrics/", views.metrics, name="dashboard_metrics"),
    path("datasets/<int:dataset_id>/dashboard/metrics/upload", views.metrics_upload, name="dashboard_metrics_upload"),
    path("datasets/<int:dataset_id>/dashboard/metrics/rouge", views.metrics_rouge, name="dashboard_metrics_rouge"),
    path("datasets/<int:dataset_id>/dashboard/protocols/", protocol_views.protocols, name="dashboard_protocols"),
    path("datasets/<int:dataset_id>/dashboard/protocols/power", protocol_views.protocols_power, name="protocols_power"),
    path(
        "datasets/<int:dataset_id>/dashboard/protocols/import", protocol_views.protocols_import, name="protocols_import"
    ),
    path(
        "datasets/<int:dataset_id>/dashboard/protocols/<int:round_id>/export.json",
        protocol_views.protocols_export,
        name="protocols_export",
    ),
    path("datasets/<int:dataset_id>/dashboard/run/<str:kind>", views.start_statistics, name="dashboard_start"),
    path("datasets/<int:dataset_id>/authoring/budget", budget_views.budget, name="authoring_budget"),
    path("datasets/<int:dataset_id>/exports/<str:what>", views.export, name="dashboard_export"),
    path("datasets/<int:dataset_id>/judges/start", judge_views.start, name="judge_start"),
    path("datasets/<int:dataset_id>/judges/runs.json", judge_views.runs_json, name="judge_runs_json"),
    path("datasets/<int:dataset_id>/judges/<int:run_id>/triage", judge_views.triage_batch, name="judge_triage_batch"),
]
