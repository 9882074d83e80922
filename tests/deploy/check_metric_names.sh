#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup is called by the trap
# Deploy test: every metric name that deploy/grafana/*.json and deploy/prometheus/alerts.yml query
# is one the programs export. Starts a private redis-server, expiry-relay, order-canceller and
# expiry-webhook (with one endpoint it never needs to reach) with --metrics-port, and expiry-api
# (its /metrics is on its --listen port), the four programs docker-compose.yml's Prometheus
# scrapes; makes the relay forward one task into the cancellers' stream and one into
# a stream with no consumer group (so that per-stream series exist), and scrapes every /metrics
# until every name is there or a deadline passes; then fails naming each name nobody exports,
# with the file that uses it. Exported names are the scraped series names, plus every family's
# series from its # TYPE line (a histogram's NAME_bucket/_sum/_count), so a family with no series
# yet still counts. `up` and the other series Prometheus makes itself are not the programs'.
# No list of names is kept here: both sides are read from the files and the programs.
# Usage: tests/deploy/check_metric_names.sh BUILD_DIR
# Env: METRIC_NAMES_DEADLINE_S (30).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
BIN=$BUILD_DIR/src
DEADLINE_S=${METRIC_NAMES_DEADLINE_S:-30}
USERS=("$ROOT"/deploy/grafana/*.json "$ROOT"/deploy/prometheus/alerts.yml)
# Series Prometheus adds itself to every target, and its alert state.
PROMETHEUS_OWN='^(up|scrape_[a-z_]+|ALERTS|ALERTS_FOR_STATE)$'
cd "$ROOT" || exit 1

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

# python3 with yaml (docker-compose's interpreter has it, as in compose_checks.sh).
py=
for candidate in /usr/bin/python3 python3; do
  "$candidate" -c 'import yaml' 2>/dev/null && { py=$candidate; break; }
done
[ -n "$py" ] || { fail "no python3 with yaml (apt-get install python3-yaml)"; finish; }
for b in relay/expiry-relay orders/order-canceller webhook/expiry-webhook api/expiry-api ctl/expiry-ctl; do
  [ -x "$BIN/$b" ] || { fail "$BIN/$b not built"; finish; }
done

if ! used=$("$py" tests/deploy/promql_metric_names.py "${USERS[@]}"); then
  fail "could not read the metric names of ${USERS[*]}"
  finish
fi
names=$(cut -f1 <<<"$used" | grep -vE "$PROMETHEUS_OWN" | sort -u)
check "the dashboard and the rules query metrics ($(grep -c . <<<"$names") names)" test -n "$names"

WORK=$(mktemp -d /tmp/expiry-metric-names.XXXXXX)
cleanup() { stop_started; rm -rf "$WORK"; }
trap cleanup EXIT
start_redis "$WORK" || { fail "redis-server did not start"; finish; }
NS=metricnames
# expiry-ctl reads the relay's settings.
export EXPIRY_RELAY_REDIS_URL=$REDIS_URL EXPIRY_RELAY_NAMESPACE=$NS
export ORDER_CANCELLER_REDIS_URL=$REDIS_URL ORDER_CANCELLER_NAMESPACE=$NS
CANCELLER_STREAM=orders:timeouts   # order-canceller's default --stream
relay_args=(--instance names-relay)
# A short trim interval, when the relay has one, so that the per-stream series come soon.
"$BIN/relay/expiry-relay" --help 2>&1 | grep -q -- '--stream-trim-interval-ms' &&
  relay_args+=(--stream-trim-interval-ms 200)
# Each on a free port, chosen again if another process takes it first (start_with_metrics).
start_with_metrics "$WORK/relay.log" "$DEADLINE_S" "$BIN/relay/expiry-relay" "${relay_args[@]}" || true
relay_port=${METRICS_PORT:-0}
METRICS_PORT=
start_with_metrics "$WORK/canceller.log" "$DEADLINE_S" "$BIN/orders/order-canceller" --consumer names-canceller || true
canceller_port=${METRICS_PORT:-0}
METRICS_PORT=
# One endpoint (its per-endpoint series exist from the start); nothing is scheduled for it.
cat >"$WORK/webhooks.json" <<'JSON'
{"endpoints": {"names": {"url": "http://127.0.0.1:9/", "secret": "whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1u"}},
 "default_endpoint": "names", "allow_private": ["127.0.0.1/32"]}
JSON
start_with_metrics "$WORK/webhook.log" "$DEADLINE_S" "$BIN/webhook/expiry-webhook" --config "$WORK/webhooks.json" \
  --redis-url "$REDIS_URL" --stream metric-names:webhook --consumer names-webhook || true
webhook_port=${METRICS_PORT:-0}
METRICS_PORT=
# expiry-api has no --metrics-port: this wrapper turns start_with_metrics' `--metrics-port P`
# (its last two arguments) into `--listen 127.0.0.1:P`.
cat >"$WORK/listen-on-metrics-port.sh" <<'SH'
port=${*: -1}
set -- "${@:1:$#-2}"
exec "$@" --listen "127.0.0.1:$port"
SH
printf 'read metric-names-%s\n' "$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$WORK/api-tokens"
start_with_metrics "$WORK/api.log" "$DEADLINE_S" bash "$WORK/listen-on-metrics-port.sh" "$BIN/api/expiry-api" \
  --tokens-file "$WORK/api-tokens" --redis-url "$REDIS_URL" --namespace "$NS" --threads 1 || true
api_port=${METRICS_PORT:-0}

ready() { [ "$(http_get "$1" /readyz 2>/dev/null)" = ready ]; }
check "expiry-relay is ready (metrics on :$relay_port)" ready "$relay_port"
check "order-canceller is ready (metrics on :$canceller_port)" ready "$canceller_port"
check "expiry-webhook is ready (metrics on :$webhook_port)" ready "$webhook_port"
check "expiry-api is ready (metrics on :$api_port)" ready "$api_port"

# One task into the cancellers' stream (it has their group), one into a stream with none.
for stream in "$CANCELLER_STREAM" metric-names:no-group; do
  check "expiry-ctl schedules a task into $stream" \
    "$BIN/ctl/expiry-ctl" schedule "order:names-$RANDOM" --delay-ms 100 --stream "$stream" \
    --payload '{"order_id":"names"}' >/dev/null
done

# exported: every series name of the four programs' /metrics, from samples and # TYPE lines.
exported() {
  local port
  for port in "$relay_port" "$canceller_port" "$webhook_port" "$api_port"; do http_get "$port" /metrics; done | awk '
    /^# TYPE / {
      if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" }
      else if ($4 == "summary") { print $3; print $3 "_sum"; print $3 "_count" }
      else print $3
      next
    }
    /^[A-Za-z_:]/ { sub(/[{ ].*/, ""); print }
  ' | sort -u
}
missing=$names
for _ in $(seq $((DEADLINE_S * 2))); do
  missing=$(comm -23 <(echo "$names") <(exported))
  [ -z "$missing" ] && break
  sleep 0.5
done
for name in $names; do
  if grep -qxF "$name" <<<"$missing"; then
    fail "$name is not exported by expiry-relay, order-canceller, expiry-webhook or expiry-api (used in $(awk -F'\t' -v n="$name" '$1 == n { print $2 }' <<<"$used" | sed "s|^$ROOT/||" | paste -sd' '))"
  else
    pass "$name is exported"
  fi
done
finish
