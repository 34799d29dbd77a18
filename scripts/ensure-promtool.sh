#!/usr/bin/env bash
# promtool, which the deploy test checks the alerting rules with, taken out of Debian's
# `prometheus` package without installing the package: installing it would also enable and
# start a Prometheus server on a machine that runs systemd. Kept in tests/tools/promtool/.
set -euo pipefail

cd "$(dirname "$0")/.."
DEST=tests/tools/promtool/promtool
[ -x "$DEST" ] && exit 0
mkdir -p "$(dirname "$DEST")"
if command -v promtool >/dev/null 2>&1; then  # one is installed already: use it
  ln -sf "$(command -v promtool)" "$DEST"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "No promtool and no apt-get: put a promtool at $DEST by hand." >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! (cd "$work" && apt-get download -qq prometheus 2>/dev/null); then
  $SUDO apt-get update -qq  # a fresh machine may have no package lists yet
  (cd "$work" && apt-get download -qq prometheus)
fi
dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
cp "$work/root/usr/bin/promtool" "$DEST.tmp"
mv "$DEST.tmp" "$DEST"
echo "promtool: $($DEST --version 2>&1 | head -1)"
