"""Panel pages: the study link, the participant's session and tasks, the lead's lists."""

from django.urls import path

from hits.providers.panel import views

urlpatterns = [
    path("panel/study/<int:batch_id>/", views.entry, name="panel_entry"),
    path("panel/session/<int:batch_id>/", views.session_page, name="panel_session"),
    path("panel/task/<str:token>/", views.task, name="panel_task"),
    path("batches/<int:batch_id>/panel/list/<str:kind>", views.payout_list, name="panel_list"),
    path("batches/<int:batch_id>/panel/paid", views.mark_paid, name="panel_paid"),
    path("batches/<int:batch_id>/panel/participants", views.participant_list, name="panel_participants"),
]
