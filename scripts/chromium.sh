#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the review console's end-to-end test
# (test/console/console.e2e.test.ts drives it with playwright-core) and print its path.
#
# Idempotent: installs the `chromium` package (and the fonts it renders with) only when the
# browser is missing, then checks that it starts headless. Under CI the e2e test fails when
# the browser is missing, so a failure here is loud, never a silent skip.
#
# Usage:  bash scripts/chromium.sh    # prints /usr/bin/chromium
set -euo pipefail

BIN="${MEMWARDEN_CHROMIUM:-/usr/bin/chromium}"
log() { echo "chromium: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -x "$BIN" ]; then
  log "installing chromium (Debian package)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium fonts-dejavu-core >&2
fi

if [ ! -x "$BIN" ]; then
  log "no Chromium at $BIN after installing"
  exit 1
fi
log "$("$BIN" --headless --no-sandbox --disable-gpu --version 2>/dev/null || "$BIN" --version)"
echo "$BIN"
