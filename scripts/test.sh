#!/usr/bin/env bash
# Run the test suite in two lanes against the real services on this machine (browser tests in
# Debian's Chromium): the whole suite on PostgreSQL and Redis, then the tests marked `portable`
# (handout, submission, review, authoring, imports) on a SQLite file, the embedded default of
# scripts/run.sh. Sets everything up first; extra arguments go to pytest in both lanes. Fails
# when either lane fails.
#
# The quick local run leaves out the tests that start processes, fuzz or load judge models:
#     bash scripts/test.sh -m "not slow"
# CI (.ci/run) runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system_setup.sh
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
export CELERY_BROKER_URL=${TEST_CELERY_BROKER_URL:-redis://127.0.0.1:6379/15}
export SECRET_KEY=${SECRET_KEY:-test-only-secret-key-not-for-production}
# Generated API examples iterate over sets: a fixed hash seed keeps them the same every run.
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}

echo "== PostgreSQL lane"
postgres=0
# In TEST_PROCESSES processes (pytest-xdist; default 2, this machine's cores), a test file to a
# process (each has its own test database; module fixtures are built once); TEST_PROCESSES=0 runs
# in this process.
DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/acu_eval} .venv/bin/python -m pytest \
    -n "${TEST_PROCESSES:-2}" --dist loadfile "$@" || postgres=$?

echo "== SQLite lane (tests marked portable)"
sqlite_dir=$(mktemp -d)
trap 'rm -rf "$sqlite_dir"' EXIT
sqlite=0
# conftest.py deselects the tests without the `portable` marker on SQLite and names the test
# database test_db.sqlite3 beside this file (a file, so WAL and locking are the real ones; one file
# per process, as many processes as the PostgreSQL lane).
DATABASE_URL="sqlite:///$sqlite_dir/db.sqlite3" ALLOW_SQLITE_TESTS=1 .venv/bin/python -m pytest \
    -n "${TEST_PROCESSES:-2}" --dist loadfile "$@" || sqlite=$?
# pytest's exit 5 (no test collected): fine when the arguments named test files with no portable
# test in them; without files named, the lane lost its tests and fails.
if [ "$sqlite" -eq 5 ]; then
    for arg in "$@"; do
        if [ -e "${arg%%::*}" ]; then
            echo "(no portable test in the files named)"
            sqlite=0
            break
        fi
    done
fi
[ "$postgres" -eq 0 ] && [ "$sqlite" -eq 0 ] || exit 1
