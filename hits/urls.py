"""Crowd routes: worker pages, the lead's batch pages, and each provider's own pages."""

from django.urls import include, path

from .views import expert, lead, people, worker

urlpatterns = [
    path("", include("hits.providers.mturk.urls")),
    path("", include("hits.providers.prolific.urls")),
    path("", include("hits.providers.panel.urls")),
    path("people/", people.people, name="people"),
    path("people/<int:user_id>/<str:action>/", people.person_action, name="person_action"),
    path("work/", worker.work, name="work"),
    path("work/next", worker.start_next, name="work_next"),
    path("work/qualification/<int:test_id>/", worker.take_test, name="take_test"),
    path("task/<str:token>/", worker.task, name="task"),
    path("task/<str:token>/submit", worker.task_submit, name="task_submit"),
    path("hits/<int:hit_id>/preview/", worker.preview, name="hit_preview"),
    path("datasets/<int:dataset_id>/batches/", lead.batch_list, name="batch_list"),
    path("datasets/<int:dataset_id>/batches/new", lead.batch_new, name="batch_new"),
    path("datasets/<int:dataset_id>/batches/estimate.json", lead.batch_estimate, name="batch_estimate"),
    path("datasets/<int:dataset_id>/qualification/new", lead.qualification_new, name="qualification_new"),
    path("datasets/<int:dataset_id>/expert/new", expert.expert_new, name="expert_new"),
    path("expert/<int:batch_id>/", expert.expert_round, name="expert_round"),
    path("expert/<int:batch_id>/next", expert.expert_next, name="expert_next"),
    path("expert/<int:batch_id>/stop", expert.expert_stop, name="expert_stop"),
    path("expert/<int:batch_id>/review", expert.expert_review, name="expert_review"),
    path("expert/<int:batch_id>/referee", expert.expert_referee, name="expert_referee"),
    path("batches/<int:batch_id>/expert", expert.expert_from_batch, name="expert_from_batch"),
    path("expert/task/<str:token>/", expert.expert_task, name="expert_task"),
    path("expert/task/<str:token>/submit", expert.expert_task_submit, name="expert_task_submit"),
    path("qualification/<int:test_id>/shared", lead.qualification_shared, name="qualification_shared"),
    path("qualification/<int:test_id>/rotate", lead.qualification_rotate, name="qualification_rotate"),
    path("qualification/<int:test_id>/alert-seen", lead.qualification_alert_seen, name="qualification_alert_seen"),
    path("batches/<int:batch_id>/", lead.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/ledger/", lead.ledger, name="batch_ledger"),
    path("batches/<int:batch_id>/ledger.csv", lead.ledger_csv, name="batch_ledger_csv"),
    path("batches/ledger.csv", lead.ledger_csv_all, name="ledger_csv_all"),
    path(
        "batches/<int:batch_id>/mturk/bonus/<int:bonus_id>/recheck",
        lead.mturk_bonus_recheck,
        name="mturk_bonus_recheck",
    ),
    path("assignments/<int:assignment_id>/", lead.assignment_review, name="assignment_review"),
    path("batches/<int:batch_id>/review", lead.review_assignments, name="batch_review"),
    path("batches/<int:batch_id>/bonus", lead.bonus, name="batch_bonus"),
    path("batches/<int:batch_id>/workers/<str:action>", lead.worker_action, name="batch_worker_action"),
    path("batches/<int:batch_id>/<str:action>", lead.batch_action, name="batch_action"),
]
