#!/usr/bin/env bash
# What the test suite needs from the machine: Debian's Chromium for the browser tests, axe-core
# (npm, pinned by tests/browser/axe/package-lock.json) for their accessibility scan, and PostgreSQL
# and Redis running on 127.0.0.1. Idempotent; quick when all is there.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
ROOT=$(cd "$(dirname "$0")/.." && pwd)

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core)
# caddy only reads the Caddyfile in the tests (caddy adapt); nothing is served.
command -v caddy >/dev/null || missing+=(caddy)
# docker-compose only validates docker-compose.yml in the tests (no engine runs here).
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  missing+=(docker-compose)
fi
command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]}..."
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# axe-core, injected by Playwright into every page the browser tests open (tests/browser/axe_scan.py).
if [ ! -f "$ROOT/tests/browser/axe/node_modules/axe-core/axe.min.js" ]; then
  echo "Installing axe-core (npm ci)..."
  npm ci --prefix "$ROOT/tests/browser/axe" --no-audit --no-fund --loglevel=error
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "Starting PostgreSQL..."
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | tail -n 1)" main start
  for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "Starting Redis..."
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
