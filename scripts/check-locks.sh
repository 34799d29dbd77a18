#!/usr/bin/env bash
# Proves that the runtime lock (requirements/runtime.txt + ner-model.txt), resolved for CPython
# 3.11 on x86_64, installs unchanged on every target the image and `make run` support: CPython
# 3.11, 3.12 and 3.13 on x86_64 and aarch64 Linux (manylinux_2_28). For each target uv resolves
# the lock again from binary wheels only, and the resolution must be exactly the lock's pins:
# no pin without a wheel for the target, no package the target needs that the lock lacks.
# `names` is the one sdist allowed: pure Python, it builds anywhere (the image builds it).
# Other lock files may be named as arguments. Needs the package index (uv's cache makes a repeat run fast). Exit 0 when all six agree.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv-tools/bin/uv}
SDIST_ONLY=(names)  # pure-Python packages published as sdists only
LOCKS=("$@")  # the lock files to check: the runtime's by default
if ((${#LOCKS[@]} == 0)); then LOCKS=(requirements/runtime.txt requirements/ner-model.txt); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pins() {  # the name==version lines of lock files, normalised and sorted
  grep -hE '^[A-Za-z0-9._-]+==' "$@" | sed -E 's/ .*//; s/\\$//' | tr 'A-Z_.' 'a-z--' | sort
}
pins "${LOCKS[@]}" >"$work/locked"
no_binary=()
for name in "${SDIST_ONLY[@]}"; do no_binary+=(--no-binary "$name"); done
failed=0
# TARGETS="aarch64:3.13 ..." checks only those (the tests' broken copies)
for pair in ${TARGETS:-x86_64:3.11 x86_64:3.12 x86_64:3.13 aarch64:3.11 aarch64:3.12 aarch64:3.13}; do
  machine=${pair%%:*} version=${pair#*:}
  {
    target="$machine-manylinux_2_28 CPython $version"
    if ! "$UV" pip compile --quiet --no-header --no-annotate --only-binary :all: \
      "${no_binary[@]}" --python-version "$version" \
      --python-platform "$machine-manylinux_2_28" \
      --output-file "$work/resolved" "${LOCKS[@]}" 2>"$work/err"; then
      echo "$target: the lock does not resolve from wheels:" >&2
      sed 's/^/  /' "$work/err" >&2
      failed=1
      continue
    fi
    pins "$work/resolved" >"$work/got"
    if ! diff -u "$work/locked" "$work/got" >"$work/diff"; then
      echo "$target: resolves to other pins than the lock's:" >&2
      sed 's/^/  /' "$work/diff" >&2
      failed=1
    else
      echo "$target: $(wc -l <"$work/got") pins, all from wheels (sdist: ${SDIST_ONLY[*]})"
    fi
  }
done
exit "$failed"
