from django.urls import path

from . import budget_views, views

urlpatterns = [
    path("datasets/<int:dataset_id>/dashboard/", views.overview, name="dashboard"),
    path("datasets/<int:dataset_id>/dashboard/live.json", views.live, name="dashboard_live"),
    path("datasets/<int:dataset_id>/dashboard/systems/", views.systems, name="dashboard_systems"),
    path("datasets/<int:dataset_id>/dashboard/workers/", views.workers, name="dashboard_workers"),
    path("datasets/<int:dataset_id>/dashboard/workers/<int:worker_id>/<str:action>", views.worker_action, name="dashboard_worker_action"),
    path("datasets/<int:dataset_id>/dashboard/metrics/", views.metrics, name="dashboard_metrics"),
    path("datasets/<int:dataset_id>/dashboard/run/<str:kind>", views.start_statistics, name="dashboard_start"),
    path("datasets/<int:dataset_id>/authoring/budget", budget_views.budget, name="authoring_budget"),
    path("datasets/<int:dataset_id>/exports/<str:what>", views.export, name="dashboard_export"),
]
