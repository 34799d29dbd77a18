#!/usr/bin/env bash
# Install the seven PDF text readers the tests read our output with (tests/readers.py), only
# what is missing: poppler, MuPDF, Ghostscript and PDFBox from apt, a Java runtime and Node
# when there are none, and pdf.js from the lock file in tests/tools/pdfjs.
# pypdfium2 and pdfminer.six come with the test environment (.venv-test, requirements/test.txt).
set -euo pipefail

cd "$(dirname "$0")/.."
PDFJS_DIR=tests/tools/pdfjs
PDFJS_STAMP=$PDFJS_DIR/node_modules/.installed-stamp

packages=(poppler-utils mupdf-tools ghostscript libpdfbox2-java)
command -v java >/dev/null 2>&1 || packages+=(default-jre-headless)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)

# Another apt or dpkg may hold the lock for a while (unattended upgrades, a parallel make):
# while one runs, wait and try again rather than fail.
apt_busy() {
  command -v pgrep >/dev/null 2>&1 || return 0  # cannot tell: assume so
  local name
  for name in apt apt-get aptitude dpkg unattended-upgr; do
    pgrep -x "$name" >/dev/null && return 0
  done
  return 1
}
attempt=1
until scripts/ensure-system-deps.sh "${packages[@]}"; do
  if [ "$attempt" -ge 10 ] || ! apt_busy; then
    echo "Could not install the PDF readers' packages: ${packages[*]}" >&2
    exit 1
  fi
  echo "apt is busy; trying again in 30 s ($attempt/9)." >&2
  sleep 30
  attempt=$((attempt + 1))
done

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  echo "pdf.js (pdfjs-dist 4.8) needs Node 18 or newer; found $(node --version)." >&2
  exit 1
fi

if [ ! -e "$PDFJS_STAMP" ] || [ "$PDFJS_DIR/package-lock.json" -nt "$PDFJS_STAMP" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "node is installed but npm is not: install npm, then run make readers again." >&2
    exit 1
  fi
  echo "Installing pdf.js for the reader tests ($PDFJS_DIR)"
  (cd "$PDFJS_DIR" && npm ci --omit=optional --no-audit --no-fund --loglevel=error)
  touch "$PDFJS_STAMP"
fi
