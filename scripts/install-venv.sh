#!/usr/bin/env bash
# Build one of the project's virtual environments from hash-pinned lock files, or bring an
# existing one back to them: exactly the pinned packages (uv pip sync removes anything else, so
# a .venv made before the split loses its test tools), then the project itself, editable and
# without dependencies of its own, so VENV/bin/pressroom is the CLI.
# Usage: scripts/install-venv.sh [--no-project] VENV LOCK...
set -euo pipefail
cd "$(dirname "$0")/.."

project=1
if [ "${1:-}" = "--no-project" ]; then
  project=0
  shift
fi
venv=$1
shift
python=${PYTHON:-python3}

test -x "$venv/bin/python" || "$python" -m venv "$venv"
# pip (the venv's own) installs the installers: pip, uv, setuptools, wheel, each by hash.
"$venv/bin/python" -m pip install --quiet --require-hashes --no-deps -r requirements/build.txt
uv=("$venv/bin/uv" pip)
target=(--python "$venv/bin/python")
# --strict: fail if a lock misses a dependency of something it pins. The build constraint pins
# (by hash) the setuptools that builds the one package the index has only as source (names).
"${uv[@]}" sync "${target[@]}" --quiet --require-hashes --strict --compile-bytecode \
  --build-constraint requirements/build.txt requirements/build.txt "$@"
if [ "$project" = 1 ]; then
  "${uv[@]}" install "${target[@]}" --quiet --no-deps --no-build-isolation --editable .
fi
