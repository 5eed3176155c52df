"""Authoring routes: the ACU writing queue, the editor, review and the lead's authoring overview."""

from django.urls import path

from .views import authoring, dataset_settings, lead_review

urlpatterns = [
    path("datasets/<int:dataset_id>/alpha", dataset_settings.set_alpha, name="dataset_alpha"),
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
        "authoring/references/<int:reference_id>/lead/<str:action>",
        lead_review.lead_action,
        name="authoring_lead_action",
    ),
    path(
        "authoring/references/<int:reference_id>/review/<str:action>",
        authoring.review_action,
        name="authoring_review_action",
    ),
]
