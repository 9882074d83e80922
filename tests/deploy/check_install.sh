#!/usr/bin/env bash
# Deploy test: `cmake --install BUILD_DIR --prefix TMP` installs the four programs, stripped, into
# TMP/bin and the function library (the file the build generates from its parts in
# src/lua/expiry/) and redis.conf into TMP/share/expiry-relay, nothing of the benchmark or the
# tests, and the installed expiry-relay runs (`--help` exits 0).
#
# Usage: tests/deploy/check_install.sh BUILD_DIR   (an already built tree)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${1:?usage: check_install.sh BUILD_DIR}
PREFIX=$(mktemp -d /tmp/expiry-install.XXXXXX)
trap 'rm -rf "$PREFIX"' EXIT

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$PREFIX.log" 2>&1; then
  pass "cmake --install $BUILD_DIR --prefix $PREFIX"
else
  fail "cmake --install $BUILD_DIR --prefix $PREFIX: $(cat "$PREFIX.log")"
  rm -f "$PREFIX.log"
  finish
fi
rm -f "$PREFIX.log"

# GNUInstallDirs puts programs in bin and data in share on every platform we build on.
for program in expiry-relay expiry-ctl order-canceller order-sim; do
  check "bin/$program is installed and executable" test -x "$PREFIX/bin/$program"
done
check "share/expiry-relay/expiry.lua is the build's src/generated/expiry.lua" \
  cmp -s "$PREFIX/share/expiry-relay/expiry.lua" "$BUILD_DIR/src/generated/expiry.lua"
check "share/expiry-relay/expiry.lua is the library expiry_v1" \
  grep -qx '#!lua name=expiry_v1' <(head -n 1 "$PREFIX/share/expiry-relay/expiry.lua")
check "share/expiry-relay/redis.conf is the repository's redis.conf" \
  cmp -s "$PREFIX/share/expiry-relay/redis.conf" "$ROOT/redis.conf"

installed=$(cd "$PREFIX" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
expected=$(printf '%s\n' bin/expiry-ctl bin/expiry-relay bin/order-canceller bin/order-sim \
  share/expiry-relay/expiry.lua share/expiry-relay/redis.conf | LC_ALL=C sort)
if [ "$installed" = "$expected" ]; then
  pass "nothing else is installed (no expiry-bench, no tests)"
else
  fail "installed files differ from the expected six"
  diff -u --label expected --label installed <(printf '%s\n' "$expected") <(printf '%s\n' "$installed") >&2
fi

# Installed programs are stripped (EXPIRY_RELAY_INSTALL_STRIP, on by default): no symbol table,
# no debug sections, and small (unstripped they were 35-38 MB each).
for program in expiry-relay expiry-ctl order-canceller order-sim; do
  sections=$(LC_ALL=C readelf -S --wide "$PREFIX/bin/$program" 2>/dev/null | grep -oE '\.(symtab|debug_[a-z]+)' | sort -u | paste -sd' ')
  size=$(stat -c %s "$PREFIX/bin/$program" 2>/dev/null || echo 0)
  if [ -z "$sections" ] && [ "$size" -gt 0 ] && [ "$size" -lt $((12 * 1024 * 1024)) ]; then
    pass "bin/$program is stripped ($((size / 1024)) KiB)"
  else
    fail "bin/$program is not stripped: ${sections:-no debug sections} and $size bytes"
  fi
done

# The installed binary runs from its new place (no reference into the build tree is needed).
if help=$("$PREFIX/bin/expiry-relay" --help 2>&1) && grep -q -- '--redis-url' <<<"$help"; then
  pass "installed expiry-relay --help exits 0 and lists --redis-url"
else
  fail "installed expiry-relay --help: $help"
fi

finish
