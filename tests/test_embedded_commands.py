"""A command of the embedded mode (no broker: tasks in process) finishes the background tasks it
started before it exits: `scripts/run.sh`'s `setup_demo` dispatches the demo's recomputes to
background threads, which died with the command, so the demo's dashboards said "being
recomputed" with nothing running and "No judgments yet" until a lead pressed Recompute now."""

import os
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest

import config.dispatch
from config.dispatch import dispatch, finish_background

from .conftest import PROJECT


class _Task:
    name = "tests.sleepy"

    def __init__(self):
        self.ran = threading.Event()

    def apply(self, args):
        self.ran.set()


@pytest.mark.django_db(transaction=True)  # on_commit runs at once outside a transaction
def test_finish_background_waits_for_a_task_thread_and_its_countdown(eager_celery, settings, monkeypatch):
    """The countdown lasts until finish_background waits for its thread (config.dispatch's sleep
    stands in for it): a real second could run out before the checks on a busy machine."""
    settings.LONG_TASKS_IN_BACKGROUND = True  # the embedded server's threads
    waiting, asked = threading.Event(), []

    def countdown(seconds):
        asked.append(seconds)
        assert waiting.wait(300)

    def join(thread, *args, **kwargs):
        waiting.set()  # finish_background has begun to wait for the thread
        return real_join(thread, *args, **kwargs)

    real_join = threading.Thread.join
    monkeypatch.setattr(config.dispatch, "time", SimpleNamespace(sleep=countdown))
    monkeypatch.setattr(threading.Thread, "join", join)
    task = _Task()
    assert dispatch(task, 1, countdown=1, background=True) == (False, None)
    assert not task.ran.is_set()  # still counting down
    assert finish_background() == 1
    assert task.ran.is_set() and asked == [1]
    assert finish_background() == 0  # nothing left


@pytest.mark.slow
def test_setup_demo_in_the_embedded_mode_leaves_the_demo_scored(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_", "LONG_"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}", DEBUG="1")

    def manage(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=PROJECT, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    manage("migrate", "--noinput", "-v0")
    manage("setup_demo")
    counts = manage(
        "shell",
        "--no-imports",
        "-c",
        "from scoring.models import ScoringRun, RecomputeRequest;"
        "print(ScoringRun.objects.filter(dataset__name='realsumm-demo', kind='scores', status='done').count(),"
        " RecomputeRequest.objects.filter(queued=True).count())",
    )
    done_runs, still_queued = map(int, counts.splitlines()[-1].split())
    assert done_runs >= 1 and still_queued == 0
