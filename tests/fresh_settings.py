"""Settings as a fresh process reads them from a given environment (start-up, not this test run)."""

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def read_in_fresh_process(expression: str, *, drop=(), **env) -> str:
    """The last line printed by `print(<expression>)` after django.setup() in a new Python
    process, with the variables in `drop` removed from this environment and `env` added."""
    environ = {k: v for k, v in os.environ.items() if k not in set(drop)}
    code = f"import json, logging, django; from django.conf import settings; django.setup(); print({expression})"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT,
        env={**environ, **env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.strip().splitlines()[-1]
