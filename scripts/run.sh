#!/usr/bin/env bash
# Set up everything on a fresh machine and run the app on the embedded default:
# SQLite, Celery tasks in-process, demo data loaded. Needs only Python 3.11.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
export DEBUG=${DEBUG:-1}
.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/python manage.py setup_demo
PORT=${PORT:-8000}
echo "Open http://127.0.0.1:$PORT/ and log in with one of the demo logins above."
exec .venv/bin/python manage.py runserver "127.0.0.1:$PORT"
