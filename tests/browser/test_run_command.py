"""The README's first command brings up the app with the demo dataset and printed logins."""

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import login

PROJECT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_script_serves_the_demo(page, shoot, tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY"}}
    # Same script, its SQLite file kept out of the working tree.
    env.update(PORT=str(port), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    proc = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output = []
    try:
        deadline = time.time() + 240
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            output.append(line)
            if "Open http" in line:
                break
        text = "".join(output)
        match = re.search(r"lead\s+demo-lead\s+password: (\S+)", text)
        assert match, text
        for _ in range(600):  # wait until runserver listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        login(page, f"http://127.0.0.1:{port}", "demo-lead", match.group(1))
        page.wait_for_selector("h1:text('Datasets')")
        assert "realsumm-demo" in page.inner_text("table.data")
        shoot(page, "run-script-home")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
