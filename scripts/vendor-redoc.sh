#!/usr/bin/env bash
# Vendors ReDoc's standalone bundle (npm package redoc, MIT) into pressroom/api/static/redoc/,
# where the API serves it at /redoc with nothing from another origin. Run by hand to move the
# pin (REDOC_VERSION), then review the diff: the bundle, its licences, and SHA256SUMS, which
# tests/unit/test_api_docs.py checks against the files shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
REDOC_VERSION=${REDOC_VERSION:-2.5.4}
dest=pressroom/api/static/redoc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "redoc@$REDOC_VERSION" >/dev/null && tar xzf redoc-*.tgz)
mkdir -p "$dest"
cp "$work/package/bundles/redoc.standalone.js" "$dest/redoc.standalone.js"
cp "$work/package/bundles/redoc.standalone.js.LICENSE.txt" "$dest/THIRD-PARTY-LICENSES.txt"
cp "$work/package/LICENSE" "$dest/LICENSE"
echo "$REDOC_VERSION" >"$dest/VERSION"
(cd "$dest" && sha256sum redoc.standalone.js LICENSE THIRD-PARTY-LICENSES.txt >SHA256SUMS)
echo "ReDoc $REDOC_VERSION vendored in $dest"
