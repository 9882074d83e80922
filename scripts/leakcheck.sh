#!/usr/bin/env bash
# Leak and memory-error check of the long-running services under reconnects: expiry-relay and
# order-canceller run under valgrind memcheck (or, with "lsan", the sanitizer build) against a
# private redis-server. Tasks are scheduled (each cancels a pending order), the connections are
# broken repeatedly (CLIENT KILL TYPE pubsub, CLIENT KILL TYPE normal, a Redis restart), more
# tasks are scheduled, and once every task is forwarded and every order cancelled both
# services get SIGTERM. Passes if both exit 0 with no definite leak and no memory error, every
# task was forwarded exactly once and every order cancelled. Prints one summary line per service.
# Usage: scripts/leakcheck.sh [valgrind|lsan]
# Env: BUILD_DIR (valgrind: build, lsan: build-asan), LEAKCHECK_TASKS (300), KEEP_TMP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=${1:-valgrind}
TASKS=${LEAKCHECK_TASKS:-300}
source scripts/lib.sh
started=$SECONDS

[ "${SKIP_DEPS:-0}" = 1 ] || scripts/deps.sh
case "$MODE" in
  valgrind)
    command -v valgrind >/dev/null || { echo "leakcheck.sh needs valgrind (scripts/deps.sh --ci installs it)" >&2; exit 1; }
    BUILD_DIR=${BUILD_DIR:-build}
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
    ;;
  lsan)
    BUILD_DIR=${BUILD_DIR:-build-asan}
    configure_sanitizer_tree "$BUILD_DIR"
    ;;
  *) echo "usage: $0 [valgrind|lsan]" >&2; exit 2 ;;
esac
# Only the three programs used here (a no-op where scripts/test.sh or sanitize.sh built them).
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target expiry-relay expiry-ctl order-canceller >/dev/null
BIN=$(cd "$BUILD_DIR/src" && pwd)
built=$SECONDS

tmp=$(mktemp -d /tmp/expiry-leakcheck.XXXXXX)
cleanup() {
  stop_started
  if [ "${KEEP_TMP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "leakcheck: FAILED: $*" >&2
  for f in "$tmp"/*.log "$tmp"/*.out; do
    [ -f "$f" ] || continue
    echo "--- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
  exit 1
}

start_redis "$tmp"
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# Stops redis-server (SIGTERM: it writes the AOF) and starts it again on the same port and dir.
restart_redis() {
  local old=${STARTED_PIDS[0]} conf="$ROOT/redis.conf" pid
  kill -TERM "$old"
  wait "$old" 2>/dev/null || true
  sleep 0.5  # the services notice and start reconnecting with backoff
  redis-server "$conf" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$tmp" --daemonize no \
    --logfile "$tmp/redis.log" &
  pid=$!
  STARTED_PIDS[0]=$pid
  wait_for "redis-server restarted" 10 rcli_ping
}
rcli_ping() { rcli PING 2>/dev/null | grep -q PONG; }

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local what=$1 limit=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out after ${limit} s waiting for $what"
    sleep 0.2
  done
}

# Runs a service under the checker in the background (pid in CHECKED_PID); its checker report
# goes to $tmp/NAME.check (valgrind) or $tmp/NAME.check.<pid> (sanitizers).
run_checked() {
  local name=$1
  shift
  if [ "$MODE" = valgrind ]; then
    valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
      --error-exitcode=1 --num-callers=30 --log-file="$tmp/$name.check" "$@" >"$tmp/$name.out" 2>&1 &
  else
    ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1:log_path=$tmp/$name.check" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$tmp/$name.check" \
      "$@" >"$tmp/$name.out" 2>&1 &
  fi
  CHECKED_PID=$!
  STARTED_PIDS+=("$CHECKED_PID")
}

relay_subscribed() { [ "$(rcli PUBSUB NUMSUB expiry:health:leak-relay | sed -n 2p)" = 1 ]; }
relay_ready() { relay_subscribed && rcli XINFO GROUPS expiry:stream 2>/dev/null | grep -q workers; }
canceller_ready() { rcli CLIENT LIST | grep -q "name=expiry-consumer-reader-leak-canceller"; }

# schedule_batch FROM TO BASE STEP: pending orders order:lc-FROM..TO and their timeout tasks,
# task i due BASE + (i - FROM) * STEP ms from now.
schedule_batch() {
  local from=$1 to=$2 base=$3 step=$4 i file="$tmp/tasks-$1.jsonl"
  : >"$file"
  for ((i = from; i <= to; i++)); do echo "HSET order:lc-$i status pending"; done | rcli >/dev/null
  for ((i = from; i <= to; i++)); do
    printf '{"id":"order:lc-%d","delay_ms":%d,"payload":"{\\"order_id\\":\\"lc-%d\\"}"}\n' \
      "$i" $((base + (i - from) * step)) "$i" >>"$file"
  done
  "$BIN/ctl/expiry-ctl" --redis-url "$REDIS_URL" schedule --file "$file" >"$tmp/ctl-$from.out" 2>&1 ||
    fail "expiry-ctl schedule --file failed: $(cat "$tmp/ctl-$from.out")"
}

forwarded_ids() { rcli --raw XRANGE expiry:stream - + | awk 'prev == "id" { print } { prev = $0 }'; }
all_forwarded() { [ "$(forwarded_ids | sort -u | wc -l)" -ge "$TASKS" ]; }
cancelled_count() {
  rcli EVAL "local n = 0 for i = 1, tonumber(ARGV[1]) do
    if redis.call('HGET', 'order:lc-' .. i, 'status') == 'cancelled' then n = n + 1 end end return n" 0 "$TASKS"
}
all_cancelled() { [ "$(cancelled_count)" = "$TASKS" ] && [ "$(rcli XPENDING expiry:stream workers | head -n 1)" = 0 ]; }

common=(--redis-url "$REDIS_URL" --reconnect-initial-ms 20 --reconnect-max-ms 500 --watchdog-interval-ms 500
  --watchdog-timeout-ms 5000 --connect-timeout-ms 5000)
run_checked relay "$BIN/relay/expiry-relay" "${common[@]}" --instance leak-relay
relay_pid=$CHECKED_PID
wait_for "the relay to subscribe" 60 relay_ready
run_checked canceller "$BIN/orders/order-canceller" "${common[@]}" --consumer leak-canceller \
  --stream expiry:stream --block-ms 200 --min-idle-ms 3000
canceller_pid=$CHECKED_PID
wait_for "the canceller to connect" 60 canceller_ready

first=$((TASKS * 2 / 3))
schedule_batch 1 "$first" 500 $((15000 / first))  # due over the next ~15 s, across the faults
kills_pubsub=0 kills_normal=0
for round in 1 2 3; do
  sleep 1.5
  n=$(rcli CLIENT KILL TYPE pubsub)
  kills_pubsub=$((kills_pubsub + n))
  wait_for "the relay to resubscribe (round $round)" 30 relay_subscribed
  sleep 1.5
  n=$(rcli CLIENT KILL TYPE normal SKIPME yes)
  kills_normal=$((kills_normal + n))
  wait_for "the relay to resubscribe after CLIENT KILL TYPE normal (round $round)" 30 relay_ready
done
restart_redis
wait_for "the relay after the Redis restart" 60 relay_ready
wait_for "the canceller after the Redis restart" 60 canceller_ready
schedule_batch $((first + 1)) "$TASKS" 0 20  # the first ones are due at once

wait_for "all $TASKS tasks forwarded" 120 all_forwarded
wait_for "all $TASKS orders cancelled and acked" 120 all_cancelled
total=$(rcli XLEN expiry:stream)
[ "$total" = "$TASKS" ] || fail "$total stream entries for $TASKS tasks (expected exactly once)"
[ "$(rcli ZCARD expiry:{0}:schedule)" = 0 ] || fail "tasks still pending in the schedule"

# SIGTERM both; the checker's exit report can take a while under valgrind.
check_exit() {
  local name=$1 pid=$2 rc=0 deadline=$((SECONDS + 120)) lost errors
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "$name did not exit within 120 s of SIGTERM"
    sleep 0.2
  done
  wait "$pid" || rc=$?
  if [ "$MODE" = valgrind ]; then
    lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 bytes in \2 blocks/p' \
      "$tmp/$name.check" | tail -n 1)
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$tmp/$name.check" | tail -n 1)
    lost=${lost:-0 bytes in 0 blocks}
    leaks="definitely lost $lost"
  else
    lost=$(cat "$tmp/$name.check".* 2>/dev/null | grep -c "ERROR: LeakSanitizer" || true)
    errors=$(cat "$tmp/$name.check".* 2>/dev/null | grep -v LeakSanitizer | grep -c "ERROR: \|runtime error" || true)
    leaks="LeakSanitizer reports $lost"
  fi
  local verdict=OK
  if [ "$rc" -ne 0 ] || [ "${errors:-1}" != 0 ] || [[ "$lost" != 0* ]]; then verdict=FAILED; fi
  printf 'leakcheck %-9s (%s): exit %d, %s, memory errors %s: %s\n' \
    "$name" "$MODE" "$rc" "$leaks" "${errors:-?}" "$verdict"
  if [ "$verdict" != OK ]; then
    cat "$tmp/$name.check"* >&2 || true
    return 1
  fi
}
status=0
check_exit canceller "$canceller_pid" || status=1
check_exit relay "$relay_pid" || status=1
forwarded=$(forwarded_ids | sort -u | wc -l)
echo "leakcheck: $forwarded/$TASKS tasks forwarded exactly once, $(cancelled_count)/$TASKS orders cancelled;" \
  "faults: $kills_pubsub pubsub and $kills_normal normal connections killed, 1 Redis restart;" \
  "build $((built - started)) s, run $((SECONDS - built)) s: $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
