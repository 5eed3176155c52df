"""run.sh's SQLite files (WAL mode) stay out of git (issue 47, item 15)."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "db.sqlite3-journal"])
def test_the_sqlite_database_and_its_wal_files_are_ignored(name):
    result = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, check=False)
    assert result.returncode == 0, f"{name} is not in .gitignore"
