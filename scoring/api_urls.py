"""REST routes of results: scores, agreement, workers and exports (?round=<batch id> for one round)."""

from django.urls import path

from scoring.machine import api as judges
from scoring.protocols import api as protocols
from scoring.results import api as results

urlpatterns = [
    path("datasets/<int:dataset_id>/scores/", results.DatasetScores.as_view(), name="api_scores"),
    path("datasets/<int:dataset_id>/recompute/", results.DatasetRecompute.as_view(), name="api_recompute"),
    path("datasets/<int:dataset_id>/agreement/", results.DatasetAgreement.as_view(), name="api_agreement"),
    path("datasets/<int:dataset_id>/workers/", results.DatasetWorkers.as_view(), name="api_workers"),
    path(
        "datasets/<int:dataset_id>/exports/judgments.csv", results.JudgmentsCSV.as_view(), name="api_export_judgments"
    ),
    path("datasets/<int:dataset_id>/exports/scores.csv", results.ScoresCSV.as_view(), name="api_export_scores"),
    path("datasets/<int:dataset_id>/exports/rose.jsonl", results.RoseJSONL.as_view(), name="api_export_rose"),
    path("datasets/<int:dataset_id>/protocols/", protocols.DatasetProtocols.as_view(), name="api_protocols"),
    # Machine judges (machine rounds)
    path("datasets/<int:dataset_id>/judge-runs/", judges.DatasetJudgeRuns.as_view(), name="api_judge_runs"),
    path("judge-runs/<int:run_id>/", judges.JudgeRunDetail.as_view(), name="api_judge_run"),
]
