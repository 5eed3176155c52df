"""Prolific's pages: study entry, screening, session tasks, the webhook and the lead's review."""

from django.urls import path

from hits.providers.prolific import views

urlpatterns = [
    path("prolific/batch/<int:batch_id>/", views.start, name="prolific_start"),
    path("prolific/screening/<int:batch_id>/", views.screening, name="prolific_screening"),
    path("prolific/session/<str:token>/", views.session_next, name="prolific_next"),
    path("prolific/task/<str:token>/", views.task, name="prolific_task"),
    path("prolific/hooks/", views.hook, name="prolific_hook"),
    path("batches/<int:batch_id>/prolific/review", views.review_sessions, name="prolific_review"),
    path(
        "batches/<int:batch_id>/prolific/bonus/<int:bonus_id>/settle", views.settle_bonus, name="prolific_settle_bonus"
    ),
    path("batches/<int:batch_id>/prolific/<str:action>", views.study_action, name="prolific_action"),
]
