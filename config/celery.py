"""The Celery app; configuration comes from Django settings under the CELERY_ prefix."""

import logging.config
import os

from celery import Celery
from celery.signals import setup_logging, task_prerun

from config.db_retry import check_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("acu")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# A task reusing a kept database connection checks it first, as a request does.
task_prerun.connect(check_connections)


def use_django_logging(**kwargs) -> None:
    """The worker and beat log as the web does, by settings.LOGGING: LOG_LEVEL, one line format,
    task tokens redacted. Without this receiver Celery replaced the root logger's handlers with its
    own at its --loglevel, so LOG_LEVEL and the redaction did not reach the worker's log."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


setup_logging.connect(use_django_logging)
