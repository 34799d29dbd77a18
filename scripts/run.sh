#!/usr/bin/env bash
# `make run`: start Pressroom on the embedded default (SQLite + local disk), send it the bundled
# samples, say where everything is, and keep serving until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PRESSROOM_PORT:-8080}"
URL="http://127.0.0.1:${PORT}"
export PRESSROOM_DATA_DIR="${PRESSROOM_DATA_DIR:-$PWD/pressroom-data}"

.venv/bin/pressroom serve --port "$PORT" &
SERVE=$!
trap 'kill -TERM $SERVE 2>/dev/null; wait $SERVE' INT TERM

for _ in $(seq 1 120); do
  if curl -fsS "$URL/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 $SERVE 2>/dev/null; then echo "pressroom serve exited" >&2; exit 1; fi
  sleep 0.5
done

.venv/bin/pressroom submit samples/* --url "$URL" --template sample \
  --title "Sample scans" -o out || true
cat <<MSG

Pressroom is serving on $URL (API docs: $URL/docs, metrics: $URL/metrics).
  results of the bundled samples: ./out/
  API key for tenant 'default':  $PRESSROOM_DATA_DIR/api-key
  try: .venv/bin/pressroom submit some-scan.pdf -o out/
Ctrl-C stops it.
MSG
wait $SERVE
