#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: docker-compose.yml is valid for docker-compose 1.29 (`config -q`) and wires the
# services as documented: redis runs the repo's redis.conf (mounted read-only) with a /data
# volume and a ping healthcheck; relay, canceller-1/2 and order-sim set their environment
# variables, all with the same Redis URL and namespace; order-sim schedules the order timeouts
# into the stream the cancellers read, and that is not the relay's default stream. api
# (expiry-api) and webhook (expiry-webhook) run the same image with the same connection
# settings, name the relay's default stream, probe their own /healthz and publish their ports on
# 127.0.0.1 only; their tokens file and webhook config are mounted read-only from example files
# in deploy/ that say they are examples; every endpoint of the webhook config is a compose
# service's listening port (order-webhook), signed with the secret that service reads. Every
# program the Dockerfile installs runs as a service, or the file's header shows how to run it.
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
for s in redis relay "${CANCELLERS[@]}" order-sim api webhook order-webhook; do
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

# --- api, webhook and order-webhook -------------------------------------------------------------
# mount_source SERVICE TARGET: the host path bind-mounted read-only at TARGET (empty if none).
mount_source() { service "$1" | tr -d "\"'" | sed -n -E "s|^    - (/[^:]+):$2:ro\$|\\1|p" | head -n 1; }
# The port of a HOST:PORT environment value.
port_of() { local v; v=$(env_of "$1" "$2"); echo "${v##*:}"; }
# publishes_on_loopback SERVICE PORT: PORT is published, and only on 127.0.0.1 (short or long
# syntax, as docker-compose resolves them).
publishes_on_loopback() {
  python3 -c '
import re, sys, yaml
ports = (yaml.safe_load(sys.stdin)["services"][sys.argv[1]].get("ports") or [])
found = []
for p in ports:
    if isinstance(p, dict):
        host, target = str(p.get("host_ip", "")), str(p.get("target"))
    else:
        parts = re.sub(r"/(tcp|udp)$", "", str(p)).split(":")
        host, target = (parts[0] if len(parts) == 3 else ""), parts[-1]
    if target == sys.argv[2]:
        found.append(host)
sys.exit(0 if found and all(h == "127.0.0.1" for h in found) else 1)
' "$1" "$2" <<<"$cfg"
}
# says_example FILE: the file says it holds examples to replace.
says_example() { grep -qi example "$1" && grep -qiE 'replace' "$1"; }
same_image_as_relay() {
  [ "$(service "$1" | grep -E '^    image:')" = "$(service relay | grep -E '^    image:')" ] &&
    [ "$(service "$1" | sed -n '/^    build:/,/^    [a-z]/p' | head -n 3)" = "$(service relay | sed -n '/^    build:/,/^    [a-z]/p' | head -n 3)" ]
}
for s in api webhook order-webhook; do
  check "$s is built from the Dockerfile into the relay's image" same_image_as_relay "$s"
done

check "api runs expiry-api" entrypoint_is api expiry-api
check "api EXPIRY_API_REDIS_URL=$REDIS_URL" env_is api EXPIRY_API_REDIS_URL "$REDIS_URL"
check "api EXPIRY_API_NAMESPACE is set" env_set api EXPIRY_API_NAMESPACE
check "api EXPIRY_API_LOG_FORMAT=json" env_is api EXPIRY_API_LOG_FORMAT json
check "api listens on all the container's interfaces (EXPIRY_API_LISTEN=0.0.0.0:PORT)" \
  grep -qE '^0\.0\.0\.0:[0-9]+$' <<<"$(env_of api EXPIRY_API_LISTEN)"
api_port=$(port_of api EXPIRY_API_LISTEN)
check "api healthcheck probes its own port $api_port" has api "https?://(127\.0\.0\.1|localhost):$api_port/healthz"
check "api publishes port $api_port on 127.0.0.1 only" publishes_on_loopback api "$api_port"
api_tokens=$(mount_source api "$(env_of api EXPIRY_API_TOKENS_FILE)")
check "api mounts its EXPIRY_API_TOKENS_FILE read-only from a file in deploy/ (${api_tokens#"$ROOT"/})" \
  test -n "$(env_of api EXPIRY_API_TOKENS_FILE)" -a -f "$api_tokens" -a "${api_tokens#"$ROOT"/deploy/}" != "$api_tokens"
check "the tokens file says its tokens are examples to replace" says_example "$api_tokens"
tokens_well_formed() { # docs/api.md: `SCOPE TOKEN` lines, tokens of 16+ visible characters, none twice
  local lines; lines=$(grep -vE '^[[:space:]]*(#|$)' "$api_tokens")
  [ -n "$lines" ] && ! grep -vqE '^(read|write|admin)[[:space:]]+[!-~]{16,}[[:space:]]*$' <<<"$lines" &&
    [ -z "$(awk '{ print $2 }' <<<"$lines" | sort | uniq -d)" ]
}
check "the tokens file is well formed (scope token, at least 16 characters, none twice)" tokens_well_formed
check "api waits for redis to be healthy" eval "service api | grep -A1 -E '^      redis:\$' | grep -q 'condition: service_healthy'"

check "webhook runs expiry-webhook" entrypoint_is webhook expiry-webhook
check "webhook EXPIRY_WEBHOOK_REDIS_URL=$REDIS_URL" env_is webhook EXPIRY_WEBHOOK_REDIS_URL "$REDIS_URL"
check "webhook EXPIRY_WEBHOOK_NAMESPACE is set" env_set webhook EXPIRY_WEBHOOK_NAMESPACE
check "webhook EXPIRY_WEBHOOK_CONSUMER is set" env_set webhook EXPIRY_WEBHOOK_CONSUMER
check "webhook EXPIRY_WEBHOOK_LOG_FORMAT=json" env_is webhook EXPIRY_WEBHOOK_LOG_FORMAT json
check "webhook EXPIRY_WEBHOOK_METRICS_BIND=0.0.0.0" env_is webhook EXPIRY_WEBHOOK_METRICS_BIND 0.0.0.0
webhook_port=$(env_of webhook EXPIRY_WEBHOOK_METRICS_PORT)
check "webhook EXPIRY_WEBHOOK_METRICS_PORT is set ($webhook_port)" grep -qE '^[1-9][0-9]*$' <<<"$webhook_port"
check "webhook healthcheck probes its own port $webhook_port" has webhook "https?://(127\.0\.0\.1|localhost):$webhook_port/healthz"
check "webhook publishes port $webhook_port on 127.0.0.1 only" publishes_on_loopback webhook "$webhook_port"
# The webhook JSON is the --config argument (EXPIRY_WEBHOOK_CONFIG would be the settings file).
webhook_config_target=$(service webhook | awk '/^    command:/ { on = 1; next } on && /^    - / { sub(/^    - /, ""); print; next } { on = 0 }' |
  tr -d "\"'" | awk 'prev == "--config" { print; exit } { prev = $0 }')
webhook_config=$(mount_source webhook "$webhook_config_target")
check "webhook mounts its --config ($webhook_config_target) read-only from a file in deploy/ (${webhook_config#"$ROOT"/})" \
  test -n "$webhook_config_target" -a -f "$webhook_config" -a "${webhook_config#"$ROOT"/deploy/}" != "$webhook_config"

check "order-webhook runs order-webhook" entrypoint_is order-webhook order-webhook
check "order-webhook ORDER_WEBHOOK_REDIS_URL=$REDIS_URL" env_is order-webhook ORDER_WEBHOOK_REDIS_URL "$REDIS_URL"
check "order-webhook listens on all the container's interfaces (ORDER_WEBHOOK_LISTEN=0.0.0.0:PORT)" \
  grep -qE '^0\.0\.0\.0:[0-9]+$' <<<"$(env_of order-webhook ORDER_WEBHOOK_LISTEN)"
hook_secret=$(mount_source order-webhook "$(env_of order-webhook ORDER_WEBHOOK_SECRET_FILE)")
check "order-webhook mounts its ORDER_WEBHOOK_SECRET_FILE read-only from a file in deploy/ (${hook_secret#"$ROOT"/})" \
  test -n "$(env_of order-webhook ORDER_WEBHOOK_SECRET_FILE)" -a -f "$hook_secret" -a "${hook_secret#"$ROOT"/deploy/}" != "$hook_secret"
check "order-webhook healthcheck probes its own port" has order-webhook "127\.0\.0\.1:$(port_of order-webhook ORDER_WEBHOOK_LISTEN)/"
check "webhook waits for order-webhook to be healthy" eval "service webhook | grep -A1 -E '^      order-webhook:\$' | grep -q 'condition: service_healthy'"

# The webhook config's endpoints: each a compose service's listening port, signed with the
# secret order-webhook reads (a plain http:// URL inside the compose network needs allow_private).
# Prints one line per problem; nothing when all is well.
webhook_config_problems() {
  python3 - "$webhook_config" "$hook_secret" "$(port_of order-webhook ORDER_WEBHOOK_LISTEN)" <<'PY'
import json, sys, urllib.parse
config_path, secret_path, hook_port = sys.argv[1:]
try:
    config = json.load(open(config_path))
except Exception as e:
    print(f"{config_path}: {e}"); sys.exit()
secret = open(secret_path).read().strip()
endpoints = config.get("endpoints") or {}
if not endpoints:
    print("no endpoints")
for name, e in endpoints.items():
    url = urllib.parse.urlsplit(e.get("url", ""))
    if url.hostname != "order-webhook" or str(url.port) != hook_port or url.path != "/orders/timeout":
        print(f"endpoint {name}: {e.get('url')} is not http://order-webhook:{hook_port}/orders/timeout")
    if secret not in [e.get("secret")] + list(e.get("secrets", [])):
        print(f"endpoint {name}: not signed with order-webhook's secret")
if not config.get("allow_private"):
    print("no allow_private: the compose network's private addresses would be refused")
if "example" not in open(config_path).read().lower() and "example" not in config_path.lower():
    print("it does not say it is an example")
PY
}
problems=$(webhook_config_problems)
check "webhook config ${webhook_config#"$ROOT"/}: endpoints are order-webhook's port, with its secret, allowed (${problems:-ok})" \
  test -z "$problems"
secret_is_example() { # the file is named an example, and its secret decodes to text saying so
  case $(basename "$hook_secret") in *example*) ;; *) return 1 ;; esac
  sed 's/^whsec_//' "$hook_secret" | base64 -d 2>/dev/null | grep -qi example
}
check "the webhook secret is marked as an example (file name and decoded text)" secret_is_example

# --- every program in the image ------------------------------------------------------------------
# The programs the Dockerfile copies into /usr/local/bin: each is some service's entrypoint (the
# relay is the image's ENTRYPOINT), or the header of this file shows `--entrypoint PROGRAM`.
image_programs=$(dockerfile_instructions Dockerfile | grep -E '^COPY --from=build ' | tr -s ' ' '\n' |
  sed -n -E 's|^/usr/local/bin/([A-Za-z0-9_.-]+)$|\1|p')
default_entrypoint=$(dockerfile_instructions Dockerfile | sed -n -E 's/^ENTRYPOINT \["([^"]+)".*/\1/p' | tail -n 1)
check "the Dockerfile installs programs ($(paste -sd' ' <<<"$image_programs"))" test -n "$image_programs"
services=$(awk '/^[^[:space:]]/ { on = ($0 == "services:"); next } on && /^  [^[:space:]]/ { sub(/^  /, ""); sub(/:$/, ""); print }' <<<"$cfg")
runs_program() {
  local s ep
  for s in $services; do
    has "$s" '^    build:' || continue
    ep=$(service "$s" | awk '/^    entrypoint:/ { sub(/^    entrypoint:[[:space:]]*/, ""); if ($0 != "") print; on = 1; next }
                           on && /^    - / { sub(/^    - /, ""); print; next } { on = 0 }' | tr -d "\"'" | head -n 1)
    [ "${ep:-$default_entrypoint}" = "$1" ] && return 0
  done
  sed -n '/^[^#]/q; p' "$COMPOSE_FILE" | grep -qE -- "--entrypoint $1( |\$)"
}
for p in $image_programs; do
  check "$p runs as a service, or the compose file's header shows how to run it" runs_program "$p"
done

# --- one namespace for everyone ----------------------------------------------------------------
namespaces=("$(env_of relay EXPIRY_RELAY_NAMESPACE)")
for c in "${CANCELLERS[@]}"; do namespaces+=("$(env_of "$c" ORDER_CANCELLER_NAMESPACE)"); done
namespaces+=("$(env_of order-sim ORDER_SIM_NAMESPACE)")
namespaces+=("$(env_of api EXPIRY_API_NAMESPACE)" "$(env_of webhook EXPIRY_WEBHOOK_NAMESPACE)")
check "relay, cancellers, order-sim, api and webhook share one namespace (${namespaces[*]})" \
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

# --- the API's tasks reach expiry-webhook ----------------------------------------------------
# Both name the relay's default stream (empty: NAMESPACE:stream), which the relay trims.
api_stream=$(env_of api EXPIRY_API_STREAM)
api_stream=${api_stream:-$(env_of api EXPIRY_API_NAMESPACE):stream}
webhook_stream=$(env_of webhook EXPIRY_WEBHOOK_STREAM)
webhook_stream=${webhook_stream:-$(env_of webhook EXPIRY_WEBHOOK_NAMESPACE):stream}
check "api schedules into the stream webhook reads ($api_stream, $webhook_stream)" test "$api_stream" = "$webhook_stream"
check "that stream is the relay's default stream ($relay_stream)" test "$webhook_stream" = "$relay_stream"

finish
