#!/usr/bin/env bash
# What the test suite needs from the machine: Debian's Chromium for the browser tests,
# and PostgreSQL and Redis running on 127.0.0.1. Idempotent; quick when all is there.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core)
# caddy only reads the Caddyfile in the tests (caddy adapt); nothing is served.
command -v caddy >/dev/null || missing+=(caddy)
# docker-compose only validates docker-compose.yml in the tests (no engine runs here).
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  missing+=(docker-compose)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]}..."
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
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
