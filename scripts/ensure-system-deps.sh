#!/usr/bin/env bash
# Install the Debian/Ubuntu packages Pressroom needs, only those that are missing.
set -euo pipefail

packages=("$@")
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  packages+=(python3-venv)
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "Pressroom needs Python 3.11 or newer (found $(python3 --version 2>&1))." >&2
  exit 1
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "Missing packages (${missing[*]}) and no apt-get: install them by hand." >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "Installing system packages: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
