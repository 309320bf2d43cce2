#!/usr/bin/env bash
# Makes sure a headless Chromium is there for the docs page's browser test: Debian's chromium
# package (the test drives it with playwright-core; no browser is downloaded by npm). Installs
# it with apt when missing. CHROMIUM_PATH names another binary to use instead.
set -euo pipefail

BROWSER="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$BROWSER" ] && exit 0
log() { echo "[ensure-browser] $*" >&2; }
command -v apt-get >/dev/null || { log "no $BROWSER and no apt-get: install Chromium and set CHROMIUM_PATH"; exit 1; }
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
log "installing chromium"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
