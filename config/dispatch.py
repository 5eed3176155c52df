"""The one place that decides whether a task runs in this process or on a Celery worker.

With no broker configured (the embedded default) Celery is eager: the task runs here and now.
With a broker, the task is queued after the current transaction commits; if queueing fails
(the broker is down) the failure is logged and the caller learns it was not queued, instead of
the request failing after its data was stored.
"""

import logging
import threading

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


# The (task name, args) of the long tasks this process runs on background threads now: a run
# stored as running that is not here lost its thread (the embedded server restarted).
_background: set[tuple] = set()
_lock = threading.Lock()


def in_background() -> bool:
    """True when `dispatch_long` runs its task on a background thread of this process."""
    from django.conf import settings

    return runs_in_process() and getattr(settings, "LONG_TASKS_IN_BACKGROUND", True)


def lost_in_background(task, *args) -> bool:
    """True when `task(*args)` was left to a background thread of the embedded mode that no
    longer runs it (the server stopped or reloaded mid-run): its stored run will never finish,
    so the page offers to start it again. False with a broker, which keeps its own queue."""
    if not in_background():
        return False
    with _lock:
        return (task.name, args) not in _background


def dispatch_long(task, *args):
    """`dispatch` for a task that runs for minutes (a power analysis): with a broker it is queued
    as usual; in process (the embedded mode) it runs on a background thread started after the
    commit, so the request answers at once and the page can show the run's progress instead of
    loading for a minute. Returns (False, None) either way: the page polls the stored run.
    `LONG_TASKS_IN_BACKGROUND = False` runs it in the request, as `dispatch` does."""
    if not in_background():
        return dispatch(task, *args)

    key = (task.name, args)

    def run():
        from django.db import connections

        try:
            task.apply(args=args)
        except Exception:
            logger.exception("%s%s failed in the background", task.name, args)
        finally:
            with _lock:
                _background.discard(key)
            connections.close_all()

    def start():
        with _lock:  # before the thread starts: the page after the redirect must find it
            _background.add(key)
        threading.Thread(target=run, name=f"task-{task.name}", daemon=True).start()

    from django.db import transaction

    transaction.on_commit(start)
    return False, None
