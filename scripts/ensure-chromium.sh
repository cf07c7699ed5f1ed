#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's Chromium (playwright-core downloads no browser of its own).
set -euo pipefail
chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ -x "$chromium" ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Chromium for the dashboard tests..."
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The dashboard tests need Chromium at $chromium: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH." >&2
exit 1
