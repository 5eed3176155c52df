"""MTurk's pages: the ExternalQuestion task page, its (held) submission and our qualification test page."""

from django.urls import path

from hits.providers.mturk import views

urlpatterns = [
    path("mturk/task/", views.task, name="mturk_task"),
    path("mturk/submit/<str:token>/", views.submit, name="mturk_submit"),
    path("mturk/qualification/<int:test_id>/", views.qualification, name="mturk_qualification"),
]
