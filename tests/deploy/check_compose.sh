#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: what a run of docker-compose.yml cannot show. scripts/compose.sh (CI's compose
# stage) brings the file up for real and checks what a user sees: every service healthy, order-sim
# through a relay kill and a Redis restart, a task from the API delivered to order-webhook, a
# drain on SIGTERM. This check keeps what that run would pass without: the file is valid for
# docker-compose 1.29 (`config -q`); every published port of every compose file binds 127.0.0.1
# only; the example tokens and secret say they are examples to replace, and the tokens are well
# formed; every program the Dockerfile installs runs as a service or the file's header shows how
# (drift between the two files); the programs share one namespace, the relays have distinct
# instance names, the cancellers do not read the relay's default stream, and the API schedules
# into the stream expiry-webhook reads.
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

RELAYS=(relay-1 relay-2)
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

# --- published ports: loopback only, in every compose file -----------------------------------
# Prints SERVICE PORT for each published port that does not bind 127.0.0.1 (short or long syntax,
# as docker-compose resolves them), with every profile's services.
ports_off_loopback() {
  "$COMPOSE" -f "$1" --profile monitoring config 2>/dev/null | python3 -c '
import re, sys, yaml
for name, svc in (yaml.safe_load(sys.stdin).get("services") or {}).items():
    for p in svc.get("ports") or []:
        if isinstance(p, dict):
            host, published = str(p.get("host_ip", "")), p.get("published")
        else:
            parts = re.sub(r"/(tcp|udp)$", "", str(p)).split(":")
            host, published = (parts[0] if len(parts) == 3 else ""), parts[-2] if len(parts) > 1 else parts[0]
        if host != "127.0.0.1":
            print(name, published)
'
}
for f in docker-compose.yml docker-compose.tls.yml docker-compose.cluster.yml; do
  # The TLS file reads its certificates from EXPIRY_TLS_DIR; config needs no files.
  off=$(ports_off_loopback "$ROOT/$f" | paste -sd' ')
  check "$f publishes ports on 127.0.0.1 only${off:+ (not: $off)}" test -z "$off"
done

# --- example secrets -----------------------------------------------------------------------------
# mount_source SERVICE TARGET: the host path bind-mounted read-only at TARGET (empty if none).
mount_source() { service "$1" | tr -d "\"'" | sed -n -E "s|^    - (/[^:]+):$2:ro\$|\\1|p" | head -n 1; }
# says_example FILE: the file says it holds examples to replace.
says_example() { grep -qi example "$1" && grep -qiE 'replace' "$1"; }
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
hook_secret=$(mount_source order-webhook "$(env_of order-webhook ORDER_WEBHOOK_SECRET_FILE)")
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
namespaces=()
for r in "${RELAYS[@]}"; do namespaces+=("$(env_of "$r" EXPIRY_RELAY_NAMESPACE)"); done
for c in "${CANCELLERS[@]}"; do namespaces+=("$(env_of "$c" ORDER_CANCELLER_NAMESPACE)"); done
namespaces+=("$(env_of order-sim ORDER_SIM_NAMESPACE)")
namespaces+=("$(env_of api EXPIRY_API_NAMESPACE)" "$(env_of webhook EXPIRY_WEBHOOK_NAMESPACE)")
check "relays, cancellers, order-sim, api and webhook share one namespace (${namespaces[*]})" \
  test "$(printf '%s\n' "${namespaces[@]}" | sort -u | grep -c .)" -eq 1

instances=()
for r in "${RELAYS[@]}"; do instances+=("$(env_of "$r" EXPIRY_RELAY_INSTANCE)"); done
check "the relays have distinct instance names (${instances[*]})" \
  test "$(printf '%s\n' "${instances[@]}" | sed '/^$/d' | sort -u | grep -c .)" -eq ${#RELAYS[@]}

# --- the order timeouts' own stream ---------------------------------------------------------
# Both programs default to orders:timeouts; the file must agree with itself whatever it says.
order_streams=("$(env_of order-sim ORDER_SIM_STREAM)")
for c in "${CANCELLERS[@]}"; do order_streams+=("$(env_of "$c" ORDER_CANCELLER_STREAM)"); done
relay_stream=$(env_of relay-1 EXPIRY_RELAY_STREAM)
relay_stream=${relay_stream:-$(env_of relay-1 EXPIRY_RELAY_NAMESPACE):stream}
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
