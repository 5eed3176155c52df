#!/usr/bin/env bash
# Run the whole test suite against the real PostgreSQL and Redis on this machine
# (browser tests in Debian's Chromium). Sets everything up first; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system_setup.sh
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
export DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/acu_eval}
export CELERY_BROKER_URL=${TEST_CELERY_BROKER_URL:-redis://127.0.0.1:6379/15}
export SECRET_KEY=${SECRET_KEY:-test-only-secret-key-not-for-production}
# Generated API examples iterate over sets: a fixed hash seed keeps them the same every run.
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
exec .venv/bin/python -m pytest "$@"
