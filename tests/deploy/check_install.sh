#!/usr/bin/env bash
# Deploy test: `cmake --install BUILD_DIR --prefix TMP` installs the four programs, stripped, into
# TMP/bin, the function library (the file the build generates from its parts in src/lua/expiry/)
# and redis.conf into TMP/share/expiry-relay, and the Producer for C++ services
# (libexpiry_producer.so, stripped, with its recurring-schedule calls and date-tz as a shared
# library it names, its headers and the CMake package ExpiryRelay; check_producer_package.sh
# builds against it), nothing of the benchmark or the tests, and the installed expiry-relay runs
# (`--help` exits 0).
#
# Usage: tests/deploy/check_install.sh BUILD_DIR   (an already built tree)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${1:?usage: check_install.sh BUILD_DIR}
# The build type names the package's per-configuration targets file (RelWithDebInfo by default).
build_type_lower() {
  local type
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
  echo "${type:-RelWithDebInfo}" | tr '[:upper:]' '[:lower:]'
}
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
for program in expiry-relay expiry-ctl expiry-api expiry-webhook order-canceller order-sim order-webhook; do
  check "bin/$program is installed and executable" test -x "$PREFIX/bin/$program"
done
check "share/expiry-relay/expiry.lua is the build's src/generated/expiry.lua" \
  cmp -s "$PREFIX/share/expiry-relay/expiry.lua" "$BUILD_DIR/src/generated/expiry.lua"
check "share/expiry-relay/expiry.lua is the library expiry_v1" \
  grep -qx '#!lua name=expiry_v1' <(head -n 1 "$PREFIX/share/expiry-relay/expiry.lua")
check "share/expiry-relay/redis.conf is the repository's redis.conf" \
  cmp -s "$PREFIX/share/expiry-relay/redis.conf" "$ROOT/redis.conf"

# Files and symbolic links (the library's versioned names). GNUInstallDirs puts libraries in lib
# under any prefix but /usr.
installed=$(cd "$PREFIX" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
expected=$(printf '%s\n' bin/expiry-api bin/expiry-ctl bin/expiry-relay bin/expiry-webhook bin/order-canceller bin/order-sim bin/order-webhook \
  share/expiry-relay/expiry.lua share/expiry-relay/redis.conf \
  include/expiry/producer/producer.h include/expiry/producer/recurring.h include/expiry/producer/replica_confirmation.h \
  include/expiry/producer/schedule_feed.h include/expiry/producer/task.h include/expiry/producer/task_reads.h \
  include/expiry/base/errors.h include/expiry/functions/task_options.h include/expiry/functions/task_values.h \
  lib/libexpiry_producer.so lib/libexpiry_producer.so.0.1 lib/libexpiry_producer.so.0.1.0 \
  lib/cmake/ExpiryRelay/ExpiryRelayConfig.cmake lib/cmake/ExpiryRelay/ExpiryRelayConfigVersion.cmake \
  lib/cmake/ExpiryRelay/ExpiryRelayTargets.cmake \
  "lib/cmake/ExpiryRelay/ExpiryRelayTargets-$(build_type_lower).cmake" | LC_ALL=C sort)
if [ "$installed" = "$expected" ]; then
  pass "nothing else is installed (no expiry-bench, no tests, no internal headers)"
else
  fail "installed files differ from the expected ones"
  diff -u --label expected --label installed <(printf '%s\n' "$expected") <(printf '%s\n' "$installed") >&2
fi

# Installed programs are stripped (EXPIRY_RELAY_INSTALL_STRIP, on by default): no symbol table,
# no debug sections, and small (unstripped they were 35-38 MB each).
for program in expiry-relay expiry-ctl expiry-api expiry-webhook order-canceller order-sim order-webhook; do
  sections=$(LC_ALL=C readelf -S --wide "$PREFIX/bin/$program" 2>/dev/null | grep -oE '\.(symtab|debug_[a-z]+)' | sort -u | paste -sd' ')
  size=$(stat -c %s "$PREFIX/bin/$program" 2>/dev/null || echo 0)
  if [ -z "$sections" ] && [ "$size" -gt 0 ] && [ "$size" -lt $((12 * 1024 * 1024)) ]; then
    pass "bin/$program is stripped ($((size / 1024)) KiB)"
  else
    fail "bin/$program is not stripped: ${sections:-no debug sections} and $size bytes"
  fi
done

# The library is stripped too (its dynamic symbols, the Producer API, stay) and exports nothing
# of the hiredis linked into it.
# (nm's output is read whole first: `nm | grep -q` under pipefail fails when grep stops early.)
library=$PREFIX/lib/libexpiry_producer.so.0.1.0
sections=$(LC_ALL=C readelf -S --wide "$library" 2>/dev/null | grep -oE '\.(symtab|debug_[a-z]+)' | sort -u | paste -sd' ')
exported=$(nm -D --defined-only -C "$library" 2>&1)
if [ -z "$sections" ] && grep -q 'expiry::Producer::schedule(' <<<"$exported"; then
  pass "lib/libexpiry_producer.so is stripped and exports the Producer ($(($(stat -c %s "$library") / 1024)) KiB)"
else
  fail "lib/libexpiry_producer.so: ${sections:-no debug sections}, Producer::schedule exported: $(grep -c 'expiry::Producer::schedule(' <<<"$exported")"
fi
if grep -q 'expiry::Producer::set_recurring(expiry::RecurringSpec const&)' <<<"$exported" &&
  grep -q 'expiry::Producer::for_each_recurring(' <<<"$exported"; then
  pass "lib/libexpiry_producer.so exports the Producer's recurring-schedule calls"
else
  fail "lib/libexpiry_producer.so does not export Producer::set_recurring and for_each_recurring"
fi
# The time zones come from Debian's date-tz, a shared library the Producer names itself (a service
# links nothing more for it), and none of its symbols are re-exported.
needed=$(LC_ALL=C readelf -d "$library" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
foreign=$(grep -v -E ' expiry::| EXPIRY_PRODUCER_0$' <<<"$exported")
if grep -qw 'libdate-tz\.so\.3' <<<"$needed" && [ -z "$foreign" ]; then
  pass "lib/libexpiry_producer.so names libdate-tz.so.3 and exports only expiry:: symbols (needs: $needed)"
else
  fail "lib/libexpiry_producer.so needs: $needed; exports besides expiry::: $(head -3 <<<"$foreign")"
fi
hiredis=$(grep -E ' (redis|sds|dict)[A-Za-z]' <<<"$exported")
if [ -z "$hiredis" ]; then
  pass "lib/libexpiry_producer.so exports none of hiredis's symbols"
else
  fail "lib/libexpiry_producer.so exports hiredis's symbols: $(head -3 <<<"$hiredis")"
fi

# The installed binary runs from its new place (no reference into the build tree is needed).
if help=$("$PREFIX/bin/expiry-relay" --help 2>&1) && grep -q -- '--redis-url' <<<"$help"; then
  pass "installed expiry-relay --help exits 0 and lists --redis-url"
else
  fail "installed expiry-relay --help: $help"
fi

finish
