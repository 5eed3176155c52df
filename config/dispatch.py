"""The one place that decides whether a task runs in this process or on a Celery worker.

With no broker configured (the embedded default) Celery is eager: the task runs here and now,
or, for long tasks and the recomputes a write or a page asks for (`background`), on a thread of
the server started after the commit. With a broker, the task is queued after the current
transaction commits; if queueing fails (the broker is down) the failure is logged and the
caller's `on_failure` runs, instead of the request failing after its data was stored. The one
coalescing scheme of repeated asks is `scoring.runs.recompute`'s flag row.
"""

import logging
import threading
import time
from functools import partial

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def runs_in_process() -> bool:
    return bool(current_app.conf.task_always_eager)


def dispatch(task, *args, countdown: int | None = None, background: bool = False, on_failure=None):
    """Run `task(*args)` here or queue it: the one such decision. `task` is a Celery task or its
    registered name (for a caller its task module imports).

    In process (no broker): now, returning (True, result); with `background` (a task that runs for
    minutes, or one a write asks for) on a thread started after the commit when
    LONG_TASKS_IN_BACKGROUND is on (`countdown` seconds later), returning (False, None): the page
    polls the stored result.
    With a broker: queued after the current transaction commits, `countdown` seconds later,
    returning (False, None); a failure to queue is logged and `on_failure()` called."""
    if runs_in_process():
        if isinstance(task, str):
            task = current_app.tasks[task]
        if not (background and in_background()):
            return True, task.apply(args=args).get()
        transaction.on_commit(partial(_start_thread, task, args, countdown))
        return False, None

    def send():
        try:
            if isinstance(task, str):
                current_app.send_task(task, args=list(args), countdown=countdown)
            elif countdown is None:
                task.delay(*args)
            else:
                task.apply_async(args=args, countdown=countdown)
        except Exception:
            logger.exception("could not queue %s%s", task if isinstance(task, str) else task.name, args)
            if on_failure is not None:
                on_failure()

    transaction.on_commit(send)
    return False, None


# The (task name, args) of the long tasks this process runs on background threads now: a run
# stored as running that is not here lost its thread (the embedded server restarted).
_background: set[tuple] = set()
_lock = threading.Lock()


def in_background() -> bool:
    """True when `dispatch(..., background=True)` runs its task on a background thread of this process."""
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
    """`dispatch` of a task that runs for minutes (a power analysis, a judge run): in the background."""
    return dispatch(task, *args, background=True)


def _start_thread(task, args: tuple, countdown: int | None = None) -> None:
    """`task(*args)` on a thread of this process, `countdown` seconds from now (as a queued task
    would: asks of those seconds coalesce into this run)."""
    key = (task.name, args)

    def run():
        from django.db import connections

        try:
            if countdown:
                time.sleep(countdown)
            task.apply(args=args)
        except Exception:
            logger.exception("%s%s failed in the background", task.name, args)
        finally:
            with _lock:
                _background.discard(key)
            connections.close_all()

    with _lock:  # before the thread starts: the page after the redirect must find it
        _background.add(key)
    threading.Thread(target=run, name=f"task-{task.name}", daemon=True).start()


def finish_background() -> int:
    """Wait for the task threads this process started; returns how many it waited for. A command
    of the embedded mode (`manage.py setup_demo`, `import_dataset`, ...) calls it before exiting
    (manage.py): its recomputes would otherwise die with the process, and its dataset's pages
    would say "being recomputed" with nothing running."""
    waited = 0
    while threads := [t for t in threading.enumerate() if t.name.startswith("task-") and t.is_alive()]:
        logger.info("waiting for %s before exiting", ", ".join(sorted(t.name for t in threads)))
        for thread in threads:
            thread.join()
        waited += len(threads)
    return waited
