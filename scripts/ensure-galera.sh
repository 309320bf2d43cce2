#!/usr/bin/env bash
# Makes sure the Galera pass (npm run test:galera) can start a cluster of its own: mariadbd and
# mariadb-install-db (mariadb-server), the galera-4 provider and rsync (the state transfer).
# Installs what is missing from Debian/Ubuntu packages; starts nothing (the tests start their
# cluster on ports of their own). Safe to run again and again.
set -euo pipefail

log() { echo "[ensure-galera] $*" >&2; }
PROVIDER="${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
missing=()
{ command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; } || missing+=(mariadb-server)
command -v mariadb-install-db >/dev/null || missing+=(mariadb-server)
[ -e "$PROVIDER" ] || missing+=(galera-4)
command -v rsync >/dev/null || missing+=(rsync)
command -v wsrep_sst_rsync >/dev/null || missing+=(mariadb-server)
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null || { log "missing ${missing[*]} and no apt-get: install them yourself"; exit 1; }
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
mapfile -t packages < <(printf '%s\n' "${missing[@]}" | sort -u)
log "installing ${packages[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
