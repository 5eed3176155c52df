from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self):
        from hits.signals import judgments_changed, submission_stored
        from scoring.runs.recompute import on_judgments_changed

        judgments_changed.connect(on_judgments_changed, dispatch_uid="scoring.runs.recompute")
        from scoring.tasks import refit_on_submission

        submission_stored.connect(refit_on_submission, dispatch_uid="scoring.runs.worker_estimates")
        from django.db.models.signals import post_delete

        from hits.models import JudgeRun
        from scoring.machine.judges.learned_models import remove_stored_model

        post_delete.connect(remove_stored_model, sender=JudgeRun, dispatch_uid="scoring.machine.remove_stored_model")
