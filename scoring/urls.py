from django.urls import path

from . import judge_views, views

urlpatterns = [
    path("datasets/<int:dataset_id>/dashboard/", views.overview, name="dashboard"),
    path("datasets/<int:dataset_id>/dashboard/live.json", views.live, name="dashboard_live"),
    path("datasets/<int:dataset_id>/dashboard/systems/", views.systems, name="dashboard_systems"),
    path("datasets/<int:dataset_id>/dashboard/workers/", views.workers, name="dashboard_workers"),
    path("datasets/<int:dataset_id>/dashboard/workers/<int:worker_id>/<str:action>", views.worker_action, name="dashboard_worker_action"),
    path("datasets/<int:dataset_id>/dashboard/metrics/", views.metrics, name="dashboard_metrics"),
    path("datasets/<int:dataset_id>/dashboard/run/<str:kind>", views.start_statistics, name="dashboard_start"),
    path("datasets/<int:dataset_id>/exports/<str:what>", views.export, name="dashboard_export"),
    path("datasets/<int:dataset_id>/judges/start", judge_views.start, name="judge_start"),
    path("datasets/<int:dataset_id>/judges/runs.json", judge_views.runs_json, name="judge_runs_json"),
    path("datasets/<int:dataset_id>/judges/<int:run_id>/triage", judge_views.triage_batch, name="judge_triage_batch"),
]
