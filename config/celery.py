"""The Celery app; configuration comes from Django settings under the CELERY_ prefix."""

import os

from celery import Celery
from celery.signals import task_prerun

from config.db_retry import check_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("acu")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# A task reusing a kept database connection checks it first, as a request does.
task_prerun.connect(check_connections)
