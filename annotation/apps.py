from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation data"

    def ready(self):
        from django.db.models.signals import post_migrate

        from config.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
