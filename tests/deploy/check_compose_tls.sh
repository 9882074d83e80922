#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: docker-compose.tls.yml is valid for docker-compose 1.29 (`config -q`) and wires
# TLS as docs/security.md describes: redis:7 runs the repo's redis.conf (mounted read-only) on a
# TLS port only (--port 0), requires client certificates (--tls-auth-clients yes), publishes no
# port, and has a healthcheck over TLS; the relay, the canceller and order-sim connect with
# rediss:// to that host and port, with a CA file, a client certificate and its key, never
# tls_insecure; every certificate and key a service names lies in a directory mounted into
# that service read-only (`:ro`), and the clients' directory is not the server's, so no client
# container sees the server's private key. Plus what docker-compose.yml's demo needs: the
# relay's metrics port, the canceller's healthcheck, one namespace and one order stream.
#
# Needs docker-compose (Debian: apt-get install docker-compose), whose python3-yaml reads the
# resolved configuration. No Docker engine and no certificates are needed: `config` does not
# read the mounted files.
#
# Usage: tests/deploy/check_compose_tls.sh [COMPOSE_FILE]   (default: docker-compose.tls.yml)
# Set COMPOSE to use another binary (default: docker-compose).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMPOSE_FILE=$(realpath "${1:-$ROOT/docker-compose.tls.yml}")
COMPOSE=${COMPOSE:-docker-compose}
cd "$ROOT" || exit 1

# The client services and their environment prefixes.
CLIENTS=(relay canceller order-sim)
declare -A PREFIX=([relay]=EXPIRY_RELAY [canceller]=ORDER_CANCELLER [order-sim]=ORDER_SIM)

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
# shellcheck source=tests/deploy/compose_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/compose_checks.sh"

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
if ! cfg=$("$COMPOSE" -f "$COMPOSE_FILE" config 2>/dev/null); then
  fail "$COMPOSE config failed"
  finish
fi
if ! flatten_cfg; then
  fail "no python3 with yaml found (python3-yaml)"
  finish
fi

# ro_mount_of SERVICE FILE: the host directory mounted read-only into SERVICE that holds the
# container path FILE (nothing if FILE is not under a read-only mount). Volumes resolve to
# SOURCE:TARGET[:MODE].
ro_mount_of() {
  q "services.$1.volumes" | awk -F: -v f="$2" '
    NF == 3 && $3 == "ro" && index(f, $2 "/") == 1 { print $1; exit }'
}
# under_ro_mount SERVICE FILE: FILE is an absolute path under a read-only mount of SERVICE.
under_ro_mount() { [ -n "$2" ] && [ -n "$(ro_mount_of "$1" "$2")" ]; }
# The host:port of a rediss:// URL (nothing for any other scheme).
rediss_host_port() { sed -nE 's|^rediss://([^@/]*@)?([^/]+).*$|\2|p' <<<"$1"; }

for s in redis "${CLIENTS[@]}"; do
  check "service $s exists" test -n "$(q "services.$s")"
done

# --- redis: TLS only, client certificates required -------------------------------------------------
check "redis runs an official redis:7 image" grep -qE '^redis:7' <<<"$(q services.redis.image)"
check "redis mounts ./redis.conf read-only" \
  grep -qxF "$ROOT/redis.conf:/usr/local/etc/redis/redis.conf:ro" <<<"$(q services.redis.volumes)"
check "redis runs redis-server with /usr/local/etc/redis/redis.conf" \
  test "$(words services.redis.command | head -n 2 | paste -sd' ')" = "redis-server /usr/local/etc/redis/redis.conf"
check "redis keeps /data on a volume" grep -qE '^[A-Za-z0-9_.-]+:/data(:rw)?$' <<<"$(q services.redis.volumes)"
check "redis: --port 0 (no plain-text port)" test "$(arg_after services.redis.command --port)" = 0
tls_port=$(arg_after services.redis.command --tls-port)
check "redis: --tls-port set ($tls_port)" grep -qE '^[1-9][0-9]*$' <<<"$tls_port"
check "redis: --tls-auth-clients yes (mutual TLS)" test "$(arg_after services.redis.command --tls-auth-clients)" = yes
server_key=$(arg_after services.redis.command --tls-key-file)
for flag in --tls-cert-file --tls-key-file --tls-ca-cert-file; do
  file=$(arg_after services.redis.command "$flag")
  check "redis: $flag ($file) is under a read-only mount" under_ro_mount redis "$file"
done
server_dir=$(ro_mount_of redis "$server_key")
check "redis publishes no port (only the compose network reaches it)" test -z "$(q services.redis.ports)"
redis_health=$(q services.redis.healthcheck.test | paste -sd' ')
check "redis healthcheck pings over TLS on port $tls_port" \
  grep -qE "redis-cli --tls .*-p $tls_port .*ping" <<<"$redis_health"

# --- the clients: rediss:// with a CA and a client certificate, all read-only -------------------
# keeps_server_key_out SERVICE: no volume of SERVICE comes from the server's key directory.
keeps_server_key_out() {
  [ -n "$server_dir" ] && ! q "services.$1.volumes" | cut -d: -f1 | grep -qxF -- "$server_dir"
}
namespaces=()
for s in "${CLIENTS[@]}"; do
  p=${PREFIX[$s]}
  url=$(q "services.$s.environment.${p}_REDIS_URL")
  check "$s ${p}_REDIS_URL is rediss://redis:$tls_port ($url)" test "$(rediss_host_port "$url")" = "redis:$tls_port"
  for v in TLS_CA_CERT_FILE TLS_CERT_FILE TLS_KEY_FILE; do
    file=$(q "services.$s.environment.${p}_$v")
    check "$s ${p}_$v ($file) is under a read-only mount" under_ro_mount "$s" "$file"
  done
  check "$s does not mount the server's key directory ($server_dir)" keeps_server_key_out "$s"
  insecure=$(q "services.$s.environment.${p}_TLS_INSECURE")
  check "$s does not set ${p}_TLS_INSECURE${insecure:+ ($insecure)}" \
    grep -qxiE '(|false|0|no)' <<<"$insecure"
  # order-sim starts after the relay and the canceller instead.
  if [ "$s" != order-sim ]; then
    check "$s waits for redis to be healthy" test "$(q "services.$s.depends_on.redis.condition")" = service_healthy
  fi
  namespaces+=("$(q "services.$s.environment.${p}_NAMESPACE")")
done

# --- the demo around it ------------------------------------------------------------------------------
check "relay is built from the Dockerfile" test "$(q services.relay.build.dockerfile)" = Dockerfile
check "relay EXPIRY_RELAY_METRICS_PORT=9100" test "$(q services.relay.environment.EXPIRY_RELAY_METRICS_PORT)" = 9100
relay_ports=$(q services.relay.ports)
check "relay publishes port 9100" \
  grep -qE "^(([0-9.]+:)?9100:9100(/tcp)?|.*'published': 9100.*'target': 9100.*)$" <<<"$relay_ports"
check "canceller runs order-canceller" test "$(q services.canceller.entrypoint | paste -sd' ')" = order-canceller
check "canceller healthcheck probes its own port 9101" \
  grep -qE '127\.0\.0\.1:9101/healthz' <<<"$(q services.canceller.healthcheck.test)"
check "order-sim runs order-sim" test "$(q services.order-sim.entrypoint | paste -sd' ')" = order-sim
check "relay, canceller and order-sim share one namespace (${namespaces[*]})" \
  test "$(printf '%s\n' "${namespaces[@]}" | sort -u | grep -c .)" -eq 1 -a -n "${namespaces[0]}"
sim_stream=$(q services.order-sim.environment.ORDER_SIM_STREAM)
check "order-sim and the canceller name one stream ($sim_stream)" \
  test -n "$sim_stream" -a "$sim_stream" = "$(q services.canceller.environment.ORDER_CANCELLER_STREAM)"

finish
