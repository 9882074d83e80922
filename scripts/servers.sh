#!/usr/bin/env bash
# Builds the extra servers of the test matrix, Valkey 8.1 and Redis 8.0, from Debian 13's own
# source packages (valkey, redis) into private prefixes $BUILD_DIR/_deps/valkey-8.1.1 and
# $BUILD_DIR/_deps/redis-8.0.2: bin/<name>-server, bin/<name>-cli and bin/<name>-sentinel (a
# symlink to the server, as upstream's make install makes it). Each is built once; a complete
# prefix is left alone. Only the server and the CLI are compiled (no benchmark, no TLS, no
# modules), and the servers' own test suites are not run. The test matrix (tests/CMakeLists.txt,
# label "matrix") runs against these binaries through EXPIRY_TEST_REDIS_SERVER and friends.
#
# The sources come through apt's own source mechanism with a private apt configuration, as in
# scripts/hiredis.sh (a trixie deb-src line for the archive this machine's apt sources name; its
# own lists and cache under the work directory; nothing outside the build tree changes). Of the
# version trixie's signed Sources index lists (its upstream part must be the pinned one below):
#   1. the full source package when its .dsc and .debian.tar.xz download: apt checks the .dsc
#      against the index, dpkg-source checks the tarballs against the .dsc and unpacks the
#      upstream tree;
#   2. else the upstream tarball (.orig.tar.*) alone: the archive has answered 404 for the Debian
#      parts of trixie's point releases while the tarball still downloads; apt checks it against
#      the index, and this script checks its SHA256 against the index again before unpacking.
#   Neither: the script fails with what apt said. The matrix is never skipped silently.
# Either way the build is the upstream tree as released, without Debian's patches (they switch to
# system jemalloc, Lua and hiredis): the tarballs carry their own deps/ and build with plain make.
# Needs: dpkg-dev, xz-utils, build-essential (scripts/deps.sh installs them).
# Usage: scripts/servers.sh [valkey|redis]... (default: both)
# Env: BUILD_DIR (default build), SERVERS_JOBS (make -j, default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt_archive.sh

# name, Debian source package, pinned upstream version, the binaries' prefix (valkey-server ...).
SERVER_TABLE=(
  "valkey valkey 8.1.1 valkey"
  "redis  redis  8.0.2 redis"
)
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${SERVERS_JOBS:-$(nproc)}
mkdir -p "$BUILD_DIR/_deps"
DEPS=$(cd "$BUILD_DIR/_deps" && pwd)

# die MESSAGE...: the loud failure of this script.
die() { echo "servers: $*" >&2; exit 1; }

# upstream_of DEBIAN_VERSION: 5:8.0.2-3+deb13u3 -> 8.0.2; 8.1.1+dfsg1-3 -> 8.1.1.
upstream_of() {
  local v=${1#*:}
  v=${v%-*}
  echo "${v%%+*}"
}

APT_READY=
WORK=
cleanup() { [ -z "$WORK" ] || rm -rf "$WORK"; }
trap cleanup EXIT

# apt_setup: the private apt configuration and its lists, once per run (apt_private).
apt_setup() {
  [ -z "$APT_READY" ] || return 0
  WORK=$(mktemp -d "$DEPS/servers-src.XXXXXX")
  private_trixie_apt "$WORK" || die "no Debian archive in this machine's apt sources"
  apt-get "${apt_private[@]}" -qq update || die "apt-get update of trixie's deb-src index from $ARCHIVE failed"
  APT_READY=1
}

# fetch_source NAME PACKAGE UPSTREAM DEST: unpacks the upstream tree into DEST/src, by case 1
# or case 2 above; prints which case it was on stdout.
fetch_source() {
  local name=$1 package=$2 upstream=$3 dest=$4 version uris line hash file rc=0 log
  version=$(apt-cache "${apt_private[@]}" showsrc "$package" 2>/dev/null |
    awk '/^Package: /{p = $2} /^Version: / && p == "'"$package"'" {print $2}' |
    while read -r v; do [ "$(upstream_of "$v")" = "$upstream" ] && echo "$v"; done | head -n 1)
  [ -n "$version" ] || die "$name: trixie's Sources index has no $package $upstream (it lists: $(
    apt-cache "${apt_private[@]}" showsrc "$package" 2>/dev/null | sed -n 's/^Version: //p' | paste -sd' ')); update the pin in $0"
  mkdir -p "$dest/dl"
  log=$dest/apt-source.log
  # The index's files with their hashes, asked before the download (apt leaves out what is there).
  uris=$(cd "$dest/dl" && apt-get "${apt_private[@]}" -qq --print-uris source "$package=$version" 2>/dev/null) || true
  echo "servers: $name: fetching Debian's source package $package=$version from $ARCHIVE (this machine's apt sources)" >&2
  (cd "$dest/dl" && apt-get "${apt_private[@]}" -q source --download-only "$package=$version") >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] && ls "$dest/dl"/*.dsc >/dev/null 2>&1; then
    # Case 1: the whole source package; dpkg-source verifies the tarballs against the .dsc.
    (cd "$dest/dl" && dpkg-source --skip-patches -x ./*.dsc "$dest/src") >>"$log" 2>&1 ||
      { cat "$log" >&2; die "$name: dpkg-source could not unpack $package=$version"; }
    echo "full source package $package=$version (.dsc verified, Debian patches not applied)"
    return 0
  fi
  # Case 2: the upstream tarball alone, checked against the index's SHA256 here as well.
  line=$(grep -E "\.orig\.tar\.(gz|xz|bz2) " <<<"$uris" | head -n 1) || true
  if [ -z "$line" ]; then
    cat "$log" >&2
    die "$name: apt lists no upstream tarball for $package=$version, and the full source package did not download"
  fi
  file=$(awk '{print $2}' <<<"$line")
  hash=$(awk '{print $4}' <<<"$line")
  case "$hash" in SHA256:*) ;; *) die "$name: the index gives no SHA256 for $file ($hash)" ;; esac
  if [ ! -f "$dest/dl/$file" ]; then
    cat "$log" >&2
    die "$name: neither the full source package nor the upstream tarball $file of $package=$version downloaded"
  fi
  echo "${hash#SHA256:}  $dest/dl/$file" | sha256sum --quiet -c - ||
    die "$name: $file does not match the SHA256 of trixie's signed Sources index"
  mkdir -p "$dest/src"
  tar -xf "$dest/dl/$file" -C "$dest/src" --strip-components=1 ||
    die "$name: could not unpack $file"
  echo "upstream tarball $file of $package=$version (SHA256 checked against the signed index; the Debian parts answered: $(
    grep -oE '(404|403|410)[^[]*' "$log" | tr -s ' ' | sed 's/ $//' | sort -u | paste -sd';'))"
}

# build_server NAME PACKAGE UPSTREAM BIN: builds one server into $DEPS/NAME-UPSTREAM, once.
build_server() {
  local name=$1 package=$2 upstream=$3 bin=$4 prefix stamp started how dest src
  prefix=$DEPS/$name-$upstream
  stamp=$prefix/.built
  if [ -f "$stamp" ] && [ -x "$prefix/bin/$bin-server" ] && [ -x "$prefix/bin/$bin-cli" ]; then
    echo "servers: $name $upstream: already built ($prefix)" >&2
    return 0
  fi
  started=$SECONDS
  apt_setup
  dest=$WORK/$name
  how=$(fetch_source "$name" "$package" "$upstream" "$dest")
  src=$dest/src
  [ -f "$src/src/server.h" ] || die "$name: the source did not unpack into $src"
  echo "servers: $name $upstream: from the $how; building ${bin}-server and ${bin}-cli (make -j$JOBS, no TLS)" >&2
  if ! make -C "$src/src" -j "$JOBS" BUILD_TLS=no "$bin-server" "$bin-cli" >"$dest/make.log" 2>&1; then
    tail -n 40 "$dest/make.log" >&2
    die "$name: make failed (log above)"
  fi
  rm -rf "$prefix"
  mkdir -p "$prefix/bin"
  install -m 755 "$src/src/$bin-server" "$src/src/$bin-cli" "$prefix/bin/"
  ln -s "$bin-server" "$prefix/bin/$bin-sentinel"
  "$prefix/bin/$bin-server" --version >&2
  printf 'source: %s\nbuilt: %s\n' "$how" "$(date -u +%FT%TZ)" >"$stamp"
  echo "servers: $name $upstream: built in $((SECONDS - started)) s into $prefix" >&2
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(valkey redis)
for w in "${wanted[@]}"; do
  found=0
  for row in "${SERVER_TABLE[@]}"; do
    read -r name package upstream bin <<<"$row"
    [ "$name" = "$w" ] || continue
    found=1
    build_server "$name" "$package" "$upstream" "$bin"
  done
  [ "$found" = 1 ] || die "unknown server '$w' (known: valkey redis)"
done
