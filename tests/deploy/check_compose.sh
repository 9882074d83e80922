#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: docker-compose.yml is valid for docker-compose 1.29 (`config -q`) and wires the
# services as documented: redis runs the repo's redis.conf (mounted read-only) with a /data
# volume and a ping healthcheck; relay, canceller-1/2 and order-sim set their environment
# variables, all with the same Redis URL and namespace; order-sim schedules the order timeouts
# into the stream the cancellers read, and that is not the relay's default stream.
#
# Needs docker-compose (Debian: apt-get install docker-compose); fails without it. No Docker
# engine is needed: `config` only parses, validates and resolves the file.
#
# Usage: tests/deploy/check_compose.sh [COMPOSE_FILE]   (default: docker-compose.yml)
# Set COMPOSE to use another binary (default: docker-compose).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMPOSE_FILE=$(realpath "${1:-$ROOT/docker-compose.yml}")
COMPOSE=${COMPOSE:-docker-compose}
cd "$ROOT" || exit 1

REDIS_URL=redis://redis:6379/0
CANCELLERS=(canceller-1 canceller-2)

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if ! command -v "$COMPOSE" >/dev/null 2>&1; then
  fail "$COMPOSE not found (CI installs it: apt-get install -y docker-compose)"
  finish
fi

if "$COMPOSE" -f "$COMPOSE_FILE" config -q; then
  pass "$COMPOSE -f $(basename "$COMPOSE_FILE") config -q"
else
  fail "$COMPOSE -f $(basename "$COMPOSE_FILE") config -q"
  finish
fi

# The resolved configuration: anchors merged, ${VAR:-default} substituted, one canonical
# layout (services and their keys at fixed indents, environment as a KEY: value mapping).
if ! cfg=$("$COMPOSE" -f "$COMPOSE_FILE" config 2>/dev/null); then
  fail "$COMPOSE config failed"
  finish
fi

# shellcheck source=tests/deploy/compose_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/compose_checks.sh"

# --- services ----------------------------------------------------------------------------------
for s in redis relay "${CANCELLERS[@]}" order-sim; do
  check "service $s exists" has "$s" .
done

# --- redis -------------------------------------------------------------------------------------
check "redis runs an official redis:7 image" has redis '^    image: "?redis:7'
redis_mounts_conf() {
  service redis | tr -d '"' | grep -qxF "    - $ROOT/redis.conf:/usr/local/etc/redis/redis.conf:ro"
}
redis_runs_conf() { # command in list form (one item per line) or string form
  local block; block=$(service redis | tr -d "\"'")
  grep -qE '^    command: .*redis-server /usr/local/etc/redis/redis\.conf' <<<"$block" ||
    { grep -qxF '    - redis-server' <<<"$block" && grep -qxF '    - /usr/local/etc/redis/redis.conf' <<<"$block"; }
}
check "redis mounts ./redis.conf read-only at /usr/local/etc/redis/redis.conf" redis_mounts_conf
check "redis starts redis-server with /usr/local/etc/redis/redis.conf" redis_runs_conf
check "redis keeps /data on a volume" has redis '^    - [A-Za-z0-9_.-]+:/data(:rw)?$'
check "redis healthcheck runs redis-cli ping" has redis 'redis-cli ping'

# --- relay -------------------------------------------------------------------------------------
check "relay is built from the Dockerfile" has relay '^    build:'
check "relay EXPIRY_RELAY_REDIS_URL=$REDIS_URL" env_is relay EXPIRY_RELAY_REDIS_URL "$REDIS_URL"
check "relay EXPIRY_RELAY_NAMESPACE is set" env_set relay EXPIRY_RELAY_NAMESPACE
check "relay EXPIRY_RELAY_METRICS_PORT=9100" env_is relay EXPIRY_RELAY_METRICS_PORT 9100
check "relay EXPIRY_RELAY_LOG_FORMAT=json" env_is relay EXPIRY_RELAY_LOG_FORMAT json
relay_publishes_9100() { # short ("9100:9100") or long (published/target) port syntax
  local block; block=$(service relay | tr -d "\"'")
  grep -qE '^    - ([0-9.]+:)?9100:9100(/tcp)?$' <<<"$block" ||
    { grep -qE 'published: 9100$' <<<"$block" && grep -qE 'target: 9100$' <<<"$block"; }
}
relay_waits_for_redis() { service relay | grep -A1 -E '^      redis:$' | grep -qE 'condition: service_healthy'; }
check "relay publishes port 9100" relay_publishes_9100
check "relay waits for redis to be healthy" relay_waits_for_redis

# --- cancellers --------------------------------------------------------------------------------
consumers=()
for c in "${CANCELLERS[@]}"; do
  check "$c runs order-canceller" entrypoint_is "$c" order-canceller
  check "$c ORDER_CANCELLER_REDIS_URL=$REDIS_URL" env_is "$c" ORDER_CANCELLER_REDIS_URL "$REDIS_URL"
  check "$c ORDER_CANCELLER_NAMESPACE is set" env_set "$c" ORDER_CANCELLER_NAMESPACE
  check "$c ORDER_CANCELLER_CONSUMER is set" env_set "$c" ORDER_CANCELLER_CONSUMER
  check "$c ORDER_CANCELLER_METRICS_PORT=9101" env_is "$c" ORDER_CANCELLER_METRICS_PORT 9101
  check "$c ORDER_CANCELLER_LOG_FORMAT is set" env_set "$c" ORDER_CANCELLER_LOG_FORMAT
  check "$c healthcheck probes its own port 9101" has "$c" 'https?://(127\.0\.0\.1|localhost):9101/healthz'
  consumers+=("$(env_of "$c" ORDER_CANCELLER_CONSUMER)")
done
distinct=$(printf '%s\n' "${consumers[@]}" | sort -u | grep -c .)
check "the ${#CANCELLERS[@]} cancellers have distinct consumer names (${consumers[*]})" \
  test "$distinct" -eq "${#CANCELLERS[@]}"

# --- order-sim ---------------------------------------------------------------------------------
check "order-sim runs order-sim" entrypoint_is order-sim order-sim
check "order-sim ORDER_SIM_REDIS_URL=$REDIS_URL" env_is order-sim ORDER_SIM_REDIS_URL "$REDIS_URL"
for v in NAMESPACE RATE DURATION_MS TIMEOUT_MS PAID_SHARE; do
  check "order-sim ORDER_SIM_$v is set" env_set order-sim "ORDER_SIM_$v"
done

# --- one namespace for everyone ----------------------------------------------------------------
namespaces=("$(env_of relay EXPIRY_RELAY_NAMESPACE)")
for c in "${CANCELLERS[@]}"; do namespaces+=("$(env_of "$c" ORDER_CANCELLER_NAMESPACE)"); done
namespaces+=("$(env_of order-sim ORDER_SIM_NAMESPACE)")
check "relay, cancellers and order-sim share one namespace (${namespaces[*]})" \
  test "$(printf '%s\n' "${namespaces[@]}" | sort -u | grep -c .)" -eq 1

# --- the order timeouts' own stream ---------------------------------------------------------
# Both programs default to orders:timeouts; the file must agree with itself whatever it says.
order_streams=("$(env_of order-sim ORDER_SIM_STREAM)")
for c in "${CANCELLERS[@]}"; do order_streams+=("$(env_of "$c" ORDER_CANCELLER_STREAM)"); done
relay_stream=$(env_of relay EXPIRY_RELAY_STREAM)
relay_stream=${relay_stream:-$(env_of relay EXPIRY_RELAY_NAMESPACE):stream}
check "order-sim and the cancellers name one stream (${order_streams[*]})" \
  test "$(printf '%s\n' "${order_streams[@]}" | sort -u | grep -c .)" -eq 1 -a -n "${order_streams[0]}"
check "the cancellers do not read the relay's default stream ($relay_stream)" \
  test "${order_streams[0]}" != "$relay_stream"

finish
