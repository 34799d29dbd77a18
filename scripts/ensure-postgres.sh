#!/usr/bin/env bash
# The test suite runs the job store on a real PostgreSQL at 127.0.0.1:5432, user postgres with
# trust auth over TCP from localhost (as on the project's machines; PRESSROOM_TEST_PG_URL
# overrides). Install the server if it is missing — and then, on that fresh install only, allow
# exactly that — and start its cluster if it is down. Anything else is explained, not changed.
set -euo pipefail

fresh=0
if ! command -v pg_lsclusters >/dev/null 2>&1; then
  "$(dirname "$0")/ensure-system-deps.sh" postgresql
  fresh=1
fi
if ! pg_lsclusters --no-header | grep -q .; then
  echo "PostgreSQL is installed but has no cluster: create one with pg_createcluster." >&2
  exit 1
fi
while read -r version cluster _port status _owner _data _log; do
  if [ "$fresh" = 1 ]; then
    hba="/etc/postgresql/$version/$cluster/pg_hba.conf"
    if ! grep -q "pressroom-tests" "$hba"; then
      SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
      { echo "host all postgres 127.0.0.1/32 trust  # pressroom-tests"; $SUDO cat "$hba"; } \
        | $SUDO tee "$hba.new" >/dev/null
      $SUDO mv "$hba.new" "$hba"
      $SUDO chown postgres:postgres "$hba"
      status=restart
    fi
  fi
  if [ "$status" != "online" ]; then
    echo "Starting PostgreSQL $version/$cluster"
    action=start; [ "$status" = restart ] && action=restart
    pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" "$action"
  fi
done < <(pg_lsclusters --no-header)
for _ in $(seq 1 30); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then break; fi
  sleep 0.5
done
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "PostgreSQL does not answer on 127.0.0.1:5432." >&2
  exit 1
fi
if [ -z "${PRESSROOM_TEST_PG_URL:-}" ] && command -v psql >/dev/null 2>&1 \
   && ! psql -h 127.0.0.1 -U postgres -d postgres -w -tAc 'select 1' >/dev/null 2>&1; then
  echo "PostgreSQL at 127.0.0.1:5432 refuses user postgres without a password." >&2
  echo "Allow it for the tests (pg_hba.conf: host all postgres 127.0.0.1/32 trust) or set" >&2
  echo "PRESSROOM_TEST_PG_URL=postgresql://USER:PASSWORD@127.0.0.1:5432/postgres." >&2
  exit 1
fi
