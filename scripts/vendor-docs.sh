#!/usr/bin/env bash
# Vendors the API documentation pages' bundles from the npm registry into pressroom/api/static/:
# Swagger UI (swagger-ui-dist, Apache-2.0; 5.x reads OpenAPI 3.1, which the API publishes) in
# swagger-ui/ and ReDoc's standalone bundle (redoc, MIT) in redoc/, each with its licences, its
# VERSION and SHA256SUMS. The API serves them at /docs and /redoc with nothing from another
# origin. Run by hand to move a pin (SWAGGER_UI_VERSION, REDOC_VERSION), then review the diff;
# tests/integration/test_operability.py checks the sums against the files shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
SWAGGER_UI_VERSION=${SWAGGER_UI_VERSION:-5.36.0}
REDOC_VERSION=${REDOC_VERSION:-2.5.4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unpack() {  # unpack PACKAGE@VERSION into $work/PACKAGE
  mkdir -p "$work/$1"
  (cd "$work/$1" && npm pack --silent "$1@$2" >/dev/null && tar xzf ./*.tgz)
}

unpack swagger-ui-dist "$SWAGGER_UI_VERSION"
dest=pressroom/api/static/swagger-ui
from=$work/swagger-ui-dist/package
rm -rf "$dest" && mkdir -p "$dest"
cp "$from/swagger-ui-bundle.js" "$from/swagger-ui.css" "$from/favicon-32x32.png" \
  "$from/LICENSE" "$from/NOTICE" "$dest/"
cp "$from/swagger-ui-bundle.js.LICENSE.txt" "$dest/THIRD-PARTY-LICENSES.txt"
echo "$SWAGGER_UI_VERSION" >"$dest/VERSION"
(cd "$dest" && sha256sum swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE NOTICE \
  THIRD-PARTY-LICENSES.txt >SHA256SUMS)
echo "Swagger UI $SWAGGER_UI_VERSION vendored in $dest"

unpack redoc "$REDOC_VERSION"
dest=pressroom/api/static/redoc
rm -rf "$dest" && mkdir -p "$dest"
# the one URL the bundle loads by itself (the Redocly logo in its footer) becomes an empty
# data: image, which fails at once and is hidden by ReDoc's own error handler: nothing is
# asked of another origin
sed 's#https://cdn\.redoc\.ly/redoc/logo-mini\.svg#data:,#g' \
  "$work/redoc/package/bundles/redoc.standalone.js" >"$dest/redoc.standalone.js"
if grep -q 'cdn\.redoc\.ly' "$dest/redoc.standalone.js"; then
  echo "the ReDoc bundle still names cdn.redoc.ly: look at what it loads" >&2
  exit 1
fi
cp "$work/redoc/package/bundles/redoc.standalone.js.LICENSE.txt" "$dest/THIRD-PARTY-LICENSES.txt"
cp "$work/redoc/package/LICENSE" "$dest/LICENSE"
echo "$REDOC_VERSION" >"$dest/VERSION"
(cd "$dest" && sha256sum redoc.standalone.js LICENSE THIRD-PARTY-LICENSES.txt >SHA256SUMS)
echo "ReDoc $REDOC_VERSION vendored in $dest"
