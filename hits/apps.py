from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "Crowd work"

    def import_models(self):
        """hits.models, then the models of each crowd provider, which live in the provider's
        package (hits/providers/<name>/models.py) but belong to this app (their tables keep the
        `hits_` prefix); the registry imports them with the providers."""
        super().import_models()
        from hits import collusion  # noqa: F401  (its model: collusion flags)
        from hits.provider_interface import registry
        from hits.ratings import models as rating_models  # noqa: F401  (a rating batch's answers)

        registry.load_all()

    def ready(self):
        from hits.services import ratings
        from hits.signals import judgments_changed

        # a rating batch's round holds exactly its counted ratings (hits.services.ratings.project)
        judgments_changed.connect(ratings.on_judgments_changed, dispatch_uid="hits.services.ratings")
