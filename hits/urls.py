from django.urls import path

from .views import lead, mturk, prolific, worker

urlpatterns = [
    path("work/", worker.work, name="work"),
    path("work/next", worker.start_next, name="work_next"),
    path("work/qualification/<int:test_id>/", worker.take_test, name="take_test"),
    path("mturk/task/", mturk.task, name="mturk_task"),
    path("mturk/qualification/<int:test_id>/", mturk.qualification, name="mturk_qualification"),
    path("prolific/batch/<int:batch_id>/", prolific.start, name="prolific_start"),
    path("prolific/screening/<int:batch_id>/", prolific.screening, name="prolific_screening"),
    path("prolific/session/<str:token>/", prolific.session_next, name="prolific_next"),
    path("prolific/task/<str:token>/", prolific.task, name="prolific_task"),
    path("prolific/hooks/", prolific.hook, name="prolific_hook"),
    path("task/<str:token>/", worker.task, name="task"),
    path("task/<str:token>/submit", worker.task_submit, name="task_submit"),
    path("hits/<int:hit_id>/preview/", worker.preview, name="hit_preview"),
    path("datasets/<int:dataset_id>/batches/", lead.batch_list, name="batch_list"),
    path("datasets/<int:dataset_id>/batches/new", lead.batch_new, name="batch_new"),
    path("datasets/<int:dataset_id>/qualification/new", lead.qualification_new, name="qualification_new"),
    path("batches/<int:batch_id>/", lead.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/ledger/", lead.ledger, name="batch_ledger"),
    path("batches/<int:batch_id>/review", lead.review_assignments, name="batch_review"),
    path("batches/<int:batch_id>/bonus", lead.bonus, name="batch_bonus"),
    path("batches/<int:batch_id>/workers/<str:action>", lead.worker_action, name="batch_worker_action"),
    path("batches/<int:batch_id>/prolific/review", prolific.review_sessions, name="prolific_review"),
    path("batches/<int:batch_id>/prolific/<str:action>", prolific.study_action, name="prolific_action"),
    path("batches/<int:batch_id>/<str:action>", lead.batch_action, name="batch_action"),
]
