"""Annotation data: datasets, documents, references, sentences, ACUs, systems, summaries."""

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation data"

    def ready(self):
        from django.db.models.signals import post_migrate

        from config.roles import connect_role_signals, ensure_role_groups

        # Every app's post_migrate (not only this one's): the hits and scoring permissions exist
        # only once their own post_migrate ran, and leads need them on the very first migrate.
        post_migrate.connect(ensure_role_groups, dispatch_uid="acu-ensure-role-groups")
        connect_role_signals()
