"""The README's `manage.py` commands run exactly as written in a fresh copy of the project (issue 13, item 3)."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT, SHARED

pytestmark = pytest.mark.slow

README = PROJECT / "README.md"


def readme_commands() -> list[str]:
    """Every line of a ```bash block of the README that runs manage.py (docker compose lines excluded)."""
    lines, inside = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```bash"
            continue
        if inside and "manage.py" in line and not line.startswith("docker"):
            lines.append(line)
    return lines


def test_every_manage_py_line_uses_the_projects_venv():
    commands = readme_commands()
    assert len(commands) >= 10
    assert [c for c in commands if not c.startswith(".venv/bin/python manage.py ")] == []
    assert "PORT" in README.read_text(encoding="utf-8")


def fresh_copy(tmp_path: Path) -> Path:
    """The project's files as a clone would have them (tracked and new, not ignored), `.venv` being
    the environment run.sh makes (here: the one running the tests) and `../shared` the data."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT, check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    root = tmp_path / "acu"
    for name in filter(None, listed):
        source = PROJECT / name
        if source.is_file():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (root / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "shared").symlink_to(SHARED)
    return root


def test_readme_commands_run_as_written(tmp_path, realsumm_path):
    root = fresh_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_"))}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'readme.sqlite3'}"
    ids = (realsumm_path / "ids.txt").read_text().split()
    systems = [p.name.removesuffix(".summary") for p in (realsumm_path / "summaries").glob("*.summary")]
    (root / "metrics.jsonl").write_text(
        "".join(
            json.dumps({"example_id": i, "rouge1": {s: ((n + k) % 7) / 7 for k, s in enumerate(systems)}}) + "\n"
            for n, i in enumerate(ids)
        )
    )
    batch_id = None
    ran = []
    for line in readme_commands():
        command = re.sub(r"\s+#.*$", "", line)  # the comment
        command = re.sub(r"\s*\[[^\]]*\]", "", command)  # optional arguments
        if "createsuperuser" in command:
            continue  # interactive
        if re.search(r"\bID\b", command):
            assert batch_id, f"{line!r} needs the id printed by create_batch"
            command = re.sub(r"\bID\b", batch_id, command)
        result = subprocess.run(
            shlex.split(command), check=False, cwd=root, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        if " create_batch " in command:
            batch_id = result.stdout.split()[-1]
            assert batch_id.isdigit(), result.stdout
        ran.append(command.split()[2])
    assert {
        "migrate",
        "import_dataset",
        "create_batch",
        "publish_batch",
        "simulate_crowd",
        "compute_scores",
        "export_judgments",
        "import_metric_scores",
        "metric_correlations",
        "export_dataset",
    } <= set(ran)
    assert (root / "realsumm.jsonl").stat().st_size > 0 and (root / "judgments.csv").stat().st_size > 0
