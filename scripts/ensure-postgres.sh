#!/usr/bin/env bash
# The test suite runs the job store on a real PostgreSQL at 127.0.0.1:5432 (trust auth for
# local connections, as on the project's machines). Install the server if it is missing and
# start its cluster if it is down; say clearly what is wrong otherwise.
set -euo pipefail

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  "$(dirname "$0")/ensure-system-deps.sh" postgresql
fi
if ! pg_lsclusters --no-header | grep -q .; then
  echo "PostgreSQL is installed but has no cluster: create one with pg_createcluster." >&2
  exit 1
fi
while read -r version cluster _port status _rest; do
  if [ "$status" != "online" ]; then
    echo "Starting PostgreSQL $version/$cluster"
    pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
  fi
done < <(pg_lsclusters --no-header)
for _ in $(seq 1 30); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then exit 0; fi
  sleep 0.5
done
echo "PostgreSQL does not answer on 127.0.0.1:5432." >&2
exit 1
