#!/usr/bin/env bash
# The README's demo, without Docker: builds the four programs it runs (six with --webhooks), starts a private redis-server with the repo's
# redis.conf on a free port, runs expiry-relay, two order-canceller workers and order-sim for
# about 20 s, prints the simulator's summary and a metrics snapshot, and stops everything it
# started (also on Ctrl-C). order-sim schedules the payment timeouts into their own stream,
# orders:timeouts, which the cancellers read (their defaults); the relay's default stream
# expiry:stream stays free for other tasks. Exit code: 0 when nothing was wrongly cancelled
# or missed; 130 after Ctrl-C (143 after SIGTERM).
#
# Ctrl-C: every program runs in its own session (setsid), so the terminal's SIGINT reaches
# only this script. While order-sim runs, the script passes the signal on to it alone: it
# creates no more orders, waits at most 5 s for those in flight (the relay and the cancellers
# still running), and prints its summary marked "cut short"; a second Ctrl-C ends that wait.
# Then everything is stopped.
#
# --cluster: the same demo on a private Redis Cluster (scripts/cluster.sh: 3 primaries and 3
# replicas on free loopback ports) with TWO relays, each serving every primary (docs/cluster.md).
# Every program is given one node's URL and finds the others itself. The namespace has 64
# buckets there (NS:buckets); each order timeout goes to its bucket's stream NS:{b}:stream,
# since a task's stream must share its slot, and the cancellers read every bucket stream.
#
# --webhooks (or DEMO_WEBHOOKS=1): the timeouts are delivered as signed webhooks instead of read
# by order-canceller: order-sim schedules each with webhook=orders, expiry-webhook (docs/webhooks.md)
# POSTs it to order-webhook (the order service's endpoint, http://127.0.0.1:PORT/orders/timeout),
# which verifies the signature with a random whsec_ secret written to the demo's temp dir and
# cancels the order if it is still unpaid. Not combined with --cluster.
#
# Knobs (environment): DEMO_DURATION_MS (20000), DEMO_RATE orders/s (50), DEMO_TIMEOUT_MS
# payment timeout (3000), DEMO_PAID_SHARE (0.5), DEMO_GRACE_MS how long order-sim waits past the
# last due time before counting a miss (3000), DEMO_READY_S how long each program may take to say
# it is ready (20), DEMO_SKIP_BUILD=1 to use an existing build,
# BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

CLUSTER=0
WEBHOOKS=${DEMO_WEBHOOKS:-0}
READY_S=${DEMO_READY_S:-20}
USAGE="usage: $0 [--cluster | --webhooks]"
case "${1:-}" in
  "") ;;
  --cluster) CLUSTER=1 ;;
  --webhooks) WEBHOOKS=1 ;;
  -h | --help) echo "$USAGE"; exit 0 ;;
  *) echo "$USAGE" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "$USAGE" >&2; exit 2; }
[ "$CLUSTER" = 1 ] && [ "$WEBHOOKS" = 1 ] && { echo "demo: --webhooks runs on one Redis, not with --cluster" >&2; exit 2; }

if [ "${DEMO_SKIP_BUILD:-0}" != 1 ]; then
  echo "demo: checking the packages it needs (scripts/deps.sh) ..."
  scripts/deps.sh --demo
  # Only the four programs the demo runs (scripts/test.sh builds the rest into the same tree).
  echo "demo: building expiry-relay, expiry-ctl, order-canceller and order-sim (first time: about 2-3 min on 2 cores) ..."
  targets="expiry-relay expiry-ctl order-canceller order-sim"
  [ "$WEBHOOKS" = 1 ] && targets+=" expiry-webhook order-webhook"
  BUILD_TARGETS="$targets" BUILD_PROGRESS=1 scripts/build.sh
fi
BIN=$(cd "${BUILD_DIR:-build}/src" && pwd)
WORK=$(mktemp -d /tmp/expiry-demo.XXXXXX)
cleanup() { stop_started; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'echo "interrupted: stopping"; exit 130' INT TERM

if [ "$CLUSTER" = 1 ]; then
  source scripts/cluster.sh
  echo "starting a Redis Cluster (3 primaries, 3 replicas) ..."
  REDIS_DETACHED=1 start_cluster "$WORK"
  REDIS_URL=$CLUSTER_URL
  RELAYS=(demo-relay-1 demo-relay-2)
  echo "Redis Cluster: $REDIS_URL (nodes on ports ${CLUSTER_PORTS[*]}; primaries $(cluster_primaries | paste -sd' '); data in $WORK)"
else
  REDIS_DETACHED=1 start_redis "$WORK"
  RELAYS=(demo-relay)
  echo "redis-server: $REDIS_URL (data in $WORK)"
  # order-sim's timeouts go to this per-task stream: the relay trims it once cancellers acknowledged.
  export EXPIRY_RELAY_TRIM_STREAMS=orders:timeouts
fi
export EXPIRY_RELAY_REDIS_URL=$REDIS_URL ORDER_CANCELLER_REDIS_URL=$REDIS_URL ORDER_SIM_REDIS_URL=$REDIS_URL

# start_relay NAME: starts expiry-relay NAME with its metrics on a free port (chosen again when
# another process takes it first) and waits (up to DEMO_READY_S) until it says it is ready. Appends the
# port to METRICS_PORTS.
start_relay() {
  local r=$1 rc=0
  start_with_metrics "$WORK/$r.log" "$READY_S" "$BIN/relay/expiry-relay" --instance "$r" || rc=$?
  case $rc in
    0) METRICS_PORTS+=("$METRICS_PORT") ;;
    2) echo "warning: $r is not ready after $READY_S s (see $WORK/$r.log)" >&2; METRICS_PORTS+=("$METRICS_PORT") ;;
    *) echo "expiry-relay $r did not start (see $WORK/$r.log)" >&2; return 1 ;;
  esac
}

METRICS_PORTS=()
for r in "${RELAYS[@]}"; do
  start_relay "$r" || exit 1
done
# start_order_webhook: order-webhook on a free port (chosen again if another process takes it
# first), up to 5 times; waits (up to 10 s) until it accepts connections. Sets HOOK_PORT.
start_order_webhook() {
  local pid _attempt
  for _attempt in 1 2 3 4 5; do
    HOOK_PORT=$(free_port) || return 1
    setsid "$BIN/orders/order-webhook" --listen "127.0.0.1:$HOOK_PORT" --secret-file "$WORK/webhook.secret" \
      --redis-url "$REDIS_URL" >"$WORK/order-webhook.log" 2>&1 &
    pid=$!
    STARTED_PIDS+=("$pid")
    for _ in $(seq 200); do
      port_in_use "$HOOK_PORT" && kill -0 "$pid" 2>/dev/null && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -0 "$pid" 2>/dev/null && { echo "order-webhook is not listening after 10 s" >&2; return 1; }
    wait "$pid" 2>/dev/null || true
    STARTED_PIDS=("${STARTED_PIDS[@]:0:${#STARTED_PIDS[@]}-1}")
    grep -q "cannot listen" "$WORK/order-webhook.log" || { tail -n 5 "$WORK/order-webhook.log" >&2; return 1; }
  done
  return 1
}

SIM_WEBHOOK=()
if [ "$WEBHOOKS" = 1 ]; then
  # A random secret shared by the sender (the config) and the receiver (its secret file).
  SECRET="whsec_$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
  (umask 077; printf '%s\n' "$SECRET" >"$WORK/webhook.secret")
  start_order_webhook || { echo "order-webhook did not start (see $WORK/order-webhook.log)" >&2; exit 1; }
  (umask 077; cat >"$WORK/webhooks.json" <<JSON
{
  "endpoints": {"orders": {"url": "http://127.0.0.1:$HOOK_PORT/orders/timeout", "secret": "$SECRET", "timeout_ms": 5000}},
  "allow_private": ["127.0.0.0/8"],
  "max_attempts": 8, "retry_base_ms": 200, "retry_max_ms": 5000
}
JSON
  )
  rc=0
  EXPIRY_WEBHOOK_REDIS_URL=$REDIS_URL start_with_metrics "$WORK/expiry-webhook.log" "$READY_S" "$BIN/webhook/expiry-webhook" \
    --config "$WORK/webhooks.json" --stream orders:timeouts --consumer hook-1 || rc=$?
  case $rc in
    0) ;;
    2) echo "warning: expiry-webhook is not ready after $READY_S s (see $WORK/expiry-webhook.log)" >&2 ;;
    *) echo "expiry-webhook did not start (see $WORK/expiry-webhook.log)" >&2; exit 1 ;;
  esac
  WEBHOOK_METRICS_PORT=$METRICS_PORT
  echo "webhooks: expiry-webhook (metrics on http://127.0.0.1:$METRICS_PORT/metrics) POSTs each timeout to" \
    "order-webhook at http://127.0.0.1:$HOOK_PORT/orders/timeout"
  SIM_WEBHOOK=(--webhook orders)
else
  # Each canceller is ready once its consumer group exists and its reads succeed, so no timeout
  # waits on a canceller that is still starting.
  for c in canceller-1 canceller-2; do
    rc=0
    start_with_metrics "$WORK/$c.log" "$READY_S" "$BIN/orders/order-canceller" --consumer "$c" || rc=$?
    case $rc in
      0) ;;
      2) echo "warning: $c is not ready after $READY_S s (see $WORK/$c.log)" >&2 ;;
      *) echo "order-canceller $c did not start (see $WORK/$c.log)" >&2; exit 1 ;;
    esac
  done
fi
if [ "$CLUSTER" = 1 ]; then
  echo "relays ready; metrics on $(printf 'http://127.0.0.1:%s/metrics\n' "${METRICS_PORTS[@]}" | paste -sd' ')"
else
  echo "relay ready; metrics on http://127.0.0.1:${METRICS_PORTS[0]}/metrics"
fi
echo "running order-sim: ${DEMO_RATE:-50} orders/s for $((${DEMO_DURATION_MS:-20000} / 1000)) s," \
  "payment timeout ${DEMO_TIMEOUT_MS:-3000} ms, ${DEMO_PAID_SHARE:-0.5} of orders paid"
echo

setsid "$BIN/orders/order-sim" --rate "${DEMO_RATE:-50}" --duration-ms "${DEMO_DURATION_MS:-20000}" \
  --timeout-ms "${DEMO_TIMEOUT_MS:-3000}" --paid-share "${DEMO_PAID_SHARE:-0.5}" --grace-ms "${DEMO_GRACE_MS:-3000}" --run-id demo "${SIM_WEBHOOK[@]}" &
SIM_PID=$!
STARTED_PIDS+=("$SIM_PID")
interrupted=0
trap 'interrupted=130; kill -INT "$SIM_PID" 2>/dev/null || true' INT
trap 'interrupted=143; kill -TERM "$SIM_PID" 2>/dev/null || true' TERM
status=0
while :; do
  # `wait` returns early when a trapped signal arrives; order-sim is then still draining.
  set +e
  wait "$SIM_PID"
  status=$?
  set -e
  kill -0 "$SIM_PID" 2>/dev/null || break
done
trap 'echo "interrupted: stopping"; exit 130' INT TERM
if [ "$interrupted" != 0 ]; then
  echo "interrupted: stopping"
  exit "$interrupted"
fi

SELECTED_METRICS='^expiry_relay_(tasks_forwarded_total|pending_tasks|overdue_tasks|lateness_seconds_(count|sum)|reconnects_total|claims_lost_total)'
if [ "$CLUSTER" = 1 ]; then
  # On a cluster the timeouts are in the 64 bucket streams; expiry-ctl merges them.
  echo
  echo "last timeout tasks in the bucket streams expiry:{b}:stream:"
  "$BIN/ctl/expiry-ctl" tail --from 0 --count 1000000 --timeout-ms 200 | tail -n 3 | sed 's/^/  /'
  echo
  echo "expiry-ctl stats:"
  "$BIN/ctl/expiry-ctl" stats | sed 's/^/  /'
  for i in "${!RELAYS[@]}"; do
    echo
    echo "${RELAYS[$i]} metrics (selected):"
    http_get "${METRICS_PORTS[$i]}" /metrics | grep -E "$SELECTED_METRICS|^expiry_relay_nodes" | sed 's/^/  /'
  done
  exit "$status"
fi
ORDER_STREAM=orders:timeouts  # order-sim's and order-canceller's default --stream
echo
echo "last timeout tasks in $ORDER_STREAM:"
"$BIN/ctl/expiry-ctl" tail --stream "$ORDER_STREAM" --from 0 --count 1000000 --timeout-ms 200 | tail -n 3 | sed 's/^/  /'
echo
echo "expiry-ctl stats --stream $ORDER_STREAM:"
"$BIN/ctl/expiry-ctl" stats --stream "$ORDER_STREAM" | sed 's/^/  /'
echo
echo "relay metrics (selected):"
http_get "${METRICS_PORTS[0]}" /metrics | grep -E "$SELECTED_METRICS" | sed 's/^/  /'
if [ "$WEBHOOKS" = 1 ]; then
  echo
  echo "expiry-webhook metrics (selected):"
  http_get "$WEBHOOK_METRICS_PORT" /metrics |
    grep -E '^expiry_webhook_(deliveries_total|retries_total|dead_letters_total)' | sed 's/^/  /'
fi

# Payment reminders through a downstream outage: deliveries are paused, two reminders fall due,
# and on resume the one more than its lateness limit late goes to the dead letters (reason=late)
# instead of reaching the customer, while the fresher one is delivered.
ctl() { "$BIN/ctl/expiry-ctl" "$@"; }
echo
echo "payment reminders through an outage (expiry-ctl pause, two reminders fall due, resume 2.5 s later):"
ctl pause | sed 's/^/  /'
ctl schedule remind:demo-1 --delay-ms 100 --max-late-ms 1000 --payload '{"order_id":"demo-1","action":"remind"}' | sed 's/^/  /'
ctl schedule remind:demo-2 --delay-ms 2000 --max-late-ms 5000 --payload '{"order_id":"demo-2","action":"remind"}' | sed 's/^/  /'
sleep 2.5  # the outage
ctl resume | sed 's/^/  /'
for _ in $(seq 1 100); do  # both settled: forwarded or dead-lettered (at most 10 s)
  [ "$(redis-cli -u "$REDIS_URL" ZCARD 'expiry:{0}:schedule')" = 0 ] && break
  sleep 0.1
done
echo "  delivered (expiry:stream):"
ctl tail --from 0 --count 10 --timeout-ms 200 | grep ' id=remind:' | sed 's/^/    /'
echo "  dead letters (expiry-ctl dead list):"
ctl dead list | grep 'task=remind:' | sed 's/^/    /'
exit "$status"
