from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("datasets/import/", views.dataset_import, name="dataset_import"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:dataset_id>/export.jsonl", views.dataset_export, name="dataset_export"),
    path(
        "datasets/<int:dataset_id>/documents/<int:document_id>/",
        views.document_detail,
        name="document_detail",
    ),
]
