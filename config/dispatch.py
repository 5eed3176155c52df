"""The one place that decides whether a task runs in this process or on a Celery worker.

With no broker configured (the embedded default) Celery is eager: the task runs here and now.
With a broker, the task is queued after the current transaction commits; if queueing fails
(the broker is down) the failure is logged and the caller learns it was not queued, instead of
the request failing after its data was stored.
"""

import logging

from celery import current_app

logger = logging.getLogger(__name__)


def runs_in_process() -> bool:
    return bool(current_app.conf.task_always_eager)


def dispatch(task, *args):
    """Run `task(*args)` in process when eager and return (True, result); otherwise queue it
    after commit and return (False, None)."""
    if runs_in_process():
        return True, task.apply(args=args).get()

    def send():
        try:
            task.delay(*args)
        except Exception:
            logger.exception("could not queue %s%s; a periodic repair will catch up", task.name, args)

    from django.db import transaction

    transaction.on_commit(send)
    return False, None
