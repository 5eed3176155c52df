#!/usr/bin/env bash
# The quality gates CI runs before the tests: lint, format check, import contracts, types, missing
# migrations, dead code.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff (lint)";            .venv/bin/ruff check .
echo "== ruff (format check)";    .venv/bin/ruff format --check .
echo "== import-linter";          .venv/bin/lint-imports
echo "== mypy";                   DJANGO_SETTINGS_MODULE=config.settings .venv/bin/mypy
echo "== migrations (every model change has its migration)"
migration_db="$(mktemp -d)"
DATABASE_URL="sqlite:///$migration_db/db.sqlite3" .venv/bin/python manage.py makemigrations --check --dry-run
rm -rf "$migration_db"
echo "== dead code (vulture)";    .venv/bin/python scripts/deadcode.py
