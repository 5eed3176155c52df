"""run.sh's SQLite files (WAL mode) and a deployment's .env (its SECRET_KEY and tokens) stay out of git."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "db.sqlite3-journal", ".env"])
def test_local_state_and_secrets_are_ignored(name):
    result = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, check=False)
    assert result.returncode == 0, f"{name} is not in .gitignore"
