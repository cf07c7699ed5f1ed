#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster when it does not answer (the tests need a real server).
set -euo pipefail
host=${PGHOST:-127.0.0.1}
port=${PGPORT:-5432}
if pg_isready -q -h "$host" -p "$port" 2>/dev/null; then exit 0; fi
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "PostgreSQL is not answering on $host:$port and pg_ctlcluster is not installed." >&2
  echo "Start a PostgreSQL server, or point TEST_DATABASE_URL at one." >&2
  exit 1
fi
echo "Starting PostgreSQL..."
pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
for _ in $(seq 1 30); do
  pg_isready -q -h "$host" -p "$port" && exit 0
  sleep 1
done
echo "PostgreSQL did not come up on $host:$port." >&2
exit 1
