#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup is called by the trap
# Deploy test: a C++ service builds against the installed Producer alone. `cmake --install
# BUILD_DIR --prefix TMP`, then examples/producer configured on its own with
# CMAKE_PREFIX_PATH=TMP (find_package(ExpiryRelay), ExpiryRelay::producer) and built; the example
# runs against a private redis-server, schedules a task and shows it, and creates a recurring
# schedule (a cron rule in Europe/Berlin) and prints its next occurrences; the installed expiry-ctl
# finds the task pending with its payload, and the schedule's definition, next instants and
# armed occurrence are in Redis (docs/protocol.md "Recurring schedules"); against no Redis it
# catches the library's IoError as expiry::Error.
# Usage: tests/deploy/check_producer_package.sh BUILD_DIR
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

WORK=$(mktemp -d /tmp/expiry-producer-package.XXXXXX)
cleanup() { stop_started; rm -rf "$WORK"; }
trap cleanup EXIT
PREFIX=$WORK/prefix
EXAMPLE=$WORK/example

if cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" 2>&1; then
  pass "cmake --install $BUILD_DIR --prefix $PREFIX"
else
  fail "cmake --install: $(cat "$WORK/install.log")"
  finish
fi

# Only the prefix: no source tree, no build tree, no private hiredis on any path.
if cmake -S "$ROOT/examples/producer" -B "$EXAMPLE" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
  >"$WORK/configure.log" 2>&1; then
  pass "examples/producer configures with CMAKE_PREFIX_PATH=$PREFIX (find_package(ExpiryRelay))"
else
  fail "examples/producer does not configure: $(tail -20 "$WORK/configure.log")"
  finish
fi
if cmake --build "$EXAMPLE" >"$WORK/build.log" 2>&1; then
  pass "examples/producer builds and links ExpiryRelay::producer"
else
  fail "examples/producer does not build: $(tail -30 "$WORK/build.log")"
  finish
fi
if grep -qE "$ROOT/src|$BUILD_DIR" "$EXAMPLE/CMakeFiles/producer-example.dir/flags.make" "$EXAMPLE/CMakeFiles/producer-example.dir/link.txt"; then
  fail "the example's compile or link line names the source or build tree"
else
  pass "the example's compile and link lines name only the prefix"
fi
check "the example loads the installed libexpiry_producer.so" \
  grep -q "$PREFIX/lib/libexpiry_producer.so" <(ldd "$EXAMPLE/producer-example")

# An error thrown inside the library is caught as expiry::Error by the service (the type
# information of the installed errors.h crosses the library's boundary).
if out=$("$EXAMPLE/producer-example" "redis://127.0.0.1:$(free_port)/0" 2>&1); then
  fail "the example succeeded without a Redis: $out"
elif grep -q '^producer-example: ' <<<"$out"; then
  pass "an unreachable Redis is caught as expiry::Error ($out)"
else
  fail "an unreachable Redis was not caught as expiry::Error: $out"
fi

start_redis "$WORK" || { fail "redis-server did not start"; finish; }
ID=order:package-$RANDOM
SID=report:package-$RANDOM
if out=$("$EXAMPLE/producer-example" "$REDIS_URL" "$ID" "$SID" 2>&1) &&
  grep -q "^scheduled $ID due_ms=" <<<"$out" && grep -q '^pending=true .*stream=expiry:stream payload={"order_id":"42"}$' <<<"$out"; then
  pass "the example schedules $ID and shows it pending"
else
  fail "the example: $out"
fi
shown=$("$PREFIX/bin/expiry-ctl" --redis-url "$REDIS_URL" show "$ID" --json 2>&1)
if grep -q '"pending":true' <<<"$shown" && grep -q '"max_late_ms":600000' <<<"$shown" &&
  grep -q '"payload":"{\\"order_id\\":\\"42\\"}"' <<<"$shown"; then
  pass "the installed expiry-ctl shows $ID pending, with its payload and lateness limit"
else
  fail "expiry-ctl show $ID: $shown"
fi

# The recurring schedule: created with its rule and zone, three next occurrences at 09:00 Berlin
# time, and in Redis as the protocol lays it out (namespace expiry, one bucket: expiry:{0}:).
next_lines=$(grep -cE '^next [0-9T:.-]+Z [0-9-]+T09:00:00\.000\+0[12]:00$' <<<"$out")
if grep -qx "created $SID version=1 rule='0 9 \* \* 1-5' tz=Europe/Berlin" <<<"$out" && [ "$next_lines" -eq 3 ]; then
  pass "the example creates the recurring schedule $SID and shows its next 3 occurrences at 09:00 Berlin time"
else
  fail "the example's recurring schedule: $out"
fi
redis() { "$REDIS_CLI_BIN" -p "$REDIS_PORT" "$@"; }
definition=$(redis HMGET "expiry:{0}:recur:$SID" rule tz payload misfire paused | paste -sd'|')
if [ "$definition" = '0 9 * * 1-5|Europe/Berlin|{"report":"daily-sales"}|skip|0' ] &&
  [ "$(redis SISMEMBER 'expiry:{0}:recurs' "$SID")" = 1 ] && [ "$(redis ZCARD "expiry:{0}:recur_next:$SID")" -gt 0 ]; then
  pass "Redis holds the definition expiry:{0}:recur:$SID, its index entry and its next instants"
else
  fail "the definition of $SID in Redis: '$definition', in expiry:{0}:recurs: $(redis SISMEMBER 'expiry:{0}:recurs' "$SID")"
fi
# Its armed occurrence is task $SID in the bucket's schedule, due at the first time the example printed.
first_next=$(sed -n 's/^next \([^ ]*\) .*/\1/p' <<<"$out" | head -n 1)
armed=$(redis ZSCORE 'expiry:{0}:schedule' "$SID")
if [ -n "$armed" ] && [ -n "$first_next" ] && [ "$(date -u -d "$first_next" +%s)000" = "$armed" ]; then
  pass "the first occurrence is armed as task $SID in expiry:{0}:schedule at $first_next"
else
  fail "the armed occurrence of $SID: score '$armed', the example's first next: '$first_next'"
fi
recur_shown=$("$PREFIX/bin/expiry-ctl" --redis-url "$REDIS_URL" recur show "$SID" --json 2>&1)
if grep -q '"rule":"0 9 \* \* 1-5"' <<<"$recur_shown" && grep -q '"tz":"Europe/Berlin"' <<<"$recur_shown"; then
  pass "the installed expiry-ctl recur show finds $SID"
else
  fail "expiry-ctl recur show $SID: $recur_shown"
fi

finish
