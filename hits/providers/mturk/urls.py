"""MTurk's pages: the ExternalQuestion task page and our qualification test page."""

from django.urls import path

from hits.providers.mturk import views

urlpatterns = [
    path("mturk/task/", views.task, name="mturk_task"),
    path("mturk/qualification/<int:test_id>/", views.qualification, name="mturk_qualification"),
]
