#!/usr/bin/env bash
# Extracts promtool from Debian's prometheus package into $BUILD_DIR/_deps/promtool (bin/promtool),
# without installing the package or its daemon: `apt-get download` then `dpkg -x` into a scratch
# directory, keeping only the promtool binary (static Go, 46 MB; 13 s here). The deploy tests run it
# (promtool check rules / check config on deploy/prometheus/). Does nothing when it is there.
# Needs: apt with the Debian lists (scripts/deps.sh runs apt-get update when it installs), dpkg.
# Env: BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR/_deps"
PREFIX=$(cd "$BUILD_DIR/_deps" && pwd)/promtool
STAMP=$PREFIX/.extracted
[ -f "$STAMP" ] && [ -x "$PREFIX/bin/promtool" ] && exit 0

started=$(date +%s)
WORK=$(mktemp -d "$(dirname "$PREFIX")/promtool-deb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "promtool: fetching Debian's prometheus package (about 19 MB)" >&2
# -o APT::Sandbox::User=root: the _apt user may not write into the build tree.
(cd "$WORK" && apt-get -qq -o APT::Sandbox::User=root download prometheus >/dev/null) ||
  { echo "promtool: apt-get download prometheus failed (run apt-get update?)" >&2; exit 1; }
deb=$(ls "$WORK"/prometheus_*.deb)
dpkg -x "$deb" "$WORK/root"
[ -x "$WORK/root/usr/bin/promtool" ] || { echo "promtool: no usr/bin/promtool in $deb" >&2; exit 1; }
rm -rf "$PREFIX"
mkdir -p "$PREFIX/bin"
mv "$WORK/root/usr/bin/promtool" "$PREFIX/bin/promtool"
dpkg-deb -f "$deb" Version >"$STAMP"
echo "promtool: $(cat "$STAMP") extracted in $(($(date +%s) - started)) s" >&2
