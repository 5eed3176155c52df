from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "Crowd work"

    def import_models(self):
        """hits.models, then the models of each crowd provider, which live in the provider's
        package (hits/providers/<name>/models.py) but belong to this app (their tables keep the
        `hits_` prefix); the registry imports them with the providers."""
        super().import_models()
        from hits.provider_interface import registry

        registry.load_all()
