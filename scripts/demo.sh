#!/usr/bin/env bash
# The README's demo: builds, starts a private redis-server with the repo's redis.conf, runs
# expiry-relay, schedules a few tasks with expiry-ctl and shows them arriving in the stream.
# Stops everything it started on exit or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

scripts/deps.sh
scripts/build.sh >/dev/null
BIN=${BUILD_DIR:-build}/src
WORK=$(mktemp -d /tmp/expiry-demo.XXXXXX)
cleanup() { stop_started; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

start_redis "$WORK"
echo "redis-server on $REDIS_URL (dir $WORK)"
export EXPIRY_RELAY_REDIS_URL=$REDIS_URL

"$BIN/expiry-relay" --instance demo >"$WORK/relay.log" 2>&1 &
STARTED_PIDS+=($!)
"$BIN/expiry-ctl" load-functions >/dev/null

echo "scheduling 8 tasks due in 1-4 s; one is cancelled, one rescheduled:"
for i in 1 2 3 4 5 6 7 8; do
  "$BIN/expiry-ctl" schedule "order:$i" --delay-ms $((500 * i)) --payload "{\"order\":$i,\"action\":\"cancel-if-unpaid\"}"
done
"$BIN/expiry-ctl" cancel order:3
"$BIN/expiry-ctl" schedule order:5 --delay-ms 4500 --payload '{"order":5,"note":"rescheduled"}'
echo
"$BIN/expiry-ctl" stats
echo
echo "tasks arriving in the stream (late_ms = fired_ms - due_ms):"
"$BIN/expiry-ctl" tail --from 0 --count 7 --timeout-ms 8000
echo
"$BIN/expiry-ctl" stats
echo
echo "relay log:"
sed 's/^/  /' "$WORK/relay.log"
