#!/usr/bin/env bash
# Builds hiredis 1.2.0 with TLS (hiredis_ssl) from Debian 13's own source package, hiredis_1.2.0-6,
# into the private prefix $BUILD_DIR/_deps/hiredis-1.2.0 (static libraries, headers, pkg-config
# files), where CMakeLists.txt looks first. For Debian 12, whose hiredis is 0.14 (no TLS).
#
# The source comes through apt's own source mechanism with a private apt configuration (a trixie
# deb-src line for the archive this machine's own apt sources name, scripts/apt_archive.sh; its
# own lists and cache under the work directory), so apt verifies it against the archive's signed
# Release file; nothing outside the build tree is changed. It is built the way
# Debian's rules build it (make USE_SSL=1), but only the static libraries are installed, so the
# programs need no runtime library path. Does nothing when the prefix is complete.
# Needs: dpkg-dev, xz-utils, libssl-dev, build-essential (scripts/deps.sh installs them).
# Env: BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt_archive.sh

VERSION=1.2.0-6
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR/_deps"
PREFIX=$(cd "$BUILD_DIR/_deps" && pwd)/hiredis-1.2.0
STAMP=$PREFIX/.built-from-$VERSION
[ -f "$STAMP" ] && exit 0

started=$(date +%s)
WORK=$(mktemp -d "$(dirname "$PREFIX")/hiredis-src.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src"
private_trixie_apt "$WORK"
echo "hiredis: fetching Debian's source package hiredis=$VERSION from $ARCHIVE (this machine's apt sources)" >&2
apt-get "${apt_private[@]}" -qq update
(cd "$WORK/src" && apt-get "${apt_private[@]}" -qq source "hiredis=$VERSION" >/dev/null)
SRC=$WORK/src/hiredis-1.2.0
[ -f "$SRC/ssl.c" ] || { echo "hiredis: the source package did not unpack into $SRC" >&2; exit 1; }

echo "hiredis: building with TLS into $PREFIX" >&2
make -C "$SRC" -s -j "$(nproc)" USE_SSL=1 DEBUG="-g" ARCH= static >/dev/null
rm -rf "$PREFIX"
make -C "$SRC" -s USE_SSL=1 PREFIX="$PREFIX" LIBRARY_PATH=lib install >/dev/null
# Static only: a private shared library would need a runtime path in every program.
rm -f "$PREFIX"/lib/*.so*
touch "$STAMP"
echo "hiredis: $VERSION built in $(($(date +%s) - started)) s" >&2
