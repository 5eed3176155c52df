from django.urls import path

from .views import authoring, datasets

urlpatterns = [
    path("", datasets.home, name="home"),
    path("datasets/import/", datasets.dataset_import, name="dataset_import"),
    path("datasets/<int:dataset_id>/", datasets.dataset_detail, name="dataset_detail"),
    path("datasets/<int:dataset_id>/export.jsonl", datasets.dataset_export, name="dataset_export"),
    path("datasets/<int:dataset_id>/documents/<int:document_id>/", datasets.document_detail, name="document_detail"),
    path("datasets/<int:dataset_id>/authoring/", authoring.overview, name="authoring_overview"),
    path("authoring/", authoring.queue, name="authoring_queue"),
    path("authoring/references/<int:reference_id>/", authoring.write, name="authoring_write"),
    path("authoring/references/<int:reference_id>/save", authoring.save, name="authoring_save"),
    path("authoring/references/<int:reference_id>/suggest", authoring.suggest, name="authoring_suggest"),
    path("datasets/<int:dataset_id>/authoring/drafts/<int:job_id>/", authoring.draft_job, name="authoring_draft_job"),
    path("authoring/references/<int:reference_id>/time", authoring.record_time, name="authoring_time"),
    path("authoring/references/<int:reference_id>/submit", authoring.submit, name="authoring_submit"),
    path("authoring/references/<int:reference_id>/review/", authoring.review, name="authoring_review"),
    path(
        "authoring/references/<int:reference_id>/review/<str:action>",
        authoring.review_action,
        name="authoring_review_action",
    ),
]
