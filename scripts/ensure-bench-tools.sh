#!/usr/bin/env bash
# Makes sure the bench's load generator is there: Debian's wrk. Without it the bench falls back
# to autocannon, a Node process that takes most of a core of its own on a 2-core machine and so
# lowers every figure it drives (the report names the generator used). Installs wrk with apt
# when missing; where that cannot be done, says so and lets the bench fall back.
set -euo pipefail

command -v wrk >/dev/null && exit 0
log() { echo "[ensure-bench-tools] $*" >&2; }
if ! command -v apt-get >/dev/null; then
  log "no wrk and no apt-get: the bench will use autocannon (install wrk for comparable figures)"
  exit 0
fi
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
log "installing wrk"
if ! { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null 2>&1 ||
  { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }; }; then
  log "could not install wrk: the bench will use autocannon"
fi
exit 0
