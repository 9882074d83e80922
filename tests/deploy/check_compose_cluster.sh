#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: docker-compose.cluster.yml is valid for docker-compose 1.29 (`config -q`) and
# wires the cluster as docs/cluster.md describes: six redis:7 nodes, each running the repo's
# redis.conf (mounted read-only) with cluster mode, its own /data volume, a static IP on the
# compose network that it also announces (so CLUSTER SLOTS reports addresses the other
# containers reach); a one-shot cluster-create service that joins exactly those six with one
# replica each and skips the create when the cluster exists; two relays, two cancellers and
# order-sim from the repo's image, each seeded with a node's address, in one namespace.
#
# Needs docker-compose (Debian: apt-get install docker-compose), whose python3-yaml reads the
# resolved configuration. No Docker engine is needed.
#
# Usage: tests/deploy/check_compose_cluster.sh [COMPOSE_FILE]   (default: docker-compose.cluster.yml)
# Set COMPOSE to use another binary (default: docker-compose).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMPOSE_FILE=$(realpath "${1:-$ROOT/docker-compose.cluster.yml}")
COMPOSE=${COMPOSE:-docker-compose}
cd "$ROOT" || exit 1

NODES=(redis-1 redis-2 redis-3 redis-4 redis-5 redis-6)
RELAYS=(relay-1 relay-2)
CANCELLERS=(canceller-1 canceller-2)

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

# The resolved configuration by path (compose_checks.sh): flatten_cfg, q, words, arg_after.
if ! flatten_cfg; then
  fail "no python3 with yaml found (python3-yaml)"
  finish
fi
has_word() { words "$1" | grep -qxF -- "$2"; }
# The host part of a redis:// URL.
url_host() { sed -E 's|^redis://([^@/]*@)?([^:/]+).*$|\2|' <<<"$1"; }

# --- the network ---------------------------------------------------------------------------------
subnet=$(q networks.cluster.ipam.config | sed -nE "s/.*'subnet': '([^']+)'.*/\1/p" | head -n 1)
check "network cluster has a fixed subnet ($subnet)" test -n "$subnet"
prefix=${subnet%.*}.   # a /24

# --- the six nodes -------------------------------------------------------------------------------
node_ips=()
for n in "${NODES[@]}"; do
  check "service $n exists" test -n "$(q "services.$n")"
  check "$n runs an official redis:7 image" grep -qE '^redis:7' <<<"$(q "services.$n.image")"
  check "$n mounts ./redis.conf read-only" grep -qxF "$ROOT/redis.conf:/usr/local/etc/redis/redis.conf:ro" <<<"$(q "services.$n.volumes")"
  check "$n runs redis-server with /usr/local/etc/redis/redis.conf" \
    test "$(words "services.$n.command" | head -n 2 | paste -sd' ')" = "redis-server /usr/local/etc/redis/redis.conf"
  check "$n: --cluster-enabled yes" test "$(arg_after "services.$n.command" --cluster-enabled)" = yes
  check "$n: --bind 0.0.0.0 (the other containers connect)" test "$(arg_after "services.$n.command" --bind)" = 0.0.0.0
  check "$n: cluster-config-file in /data (nodes.conf survives a restart)" \
    test "$(arg_after "services.$n.command" --cluster-config-file)" = nodes.conf
  data_volume=$(q "services.$n.volumes" | sed -nE 's/^([A-Za-z0-9_.-]+):\/data(:rw)?$/\1/p')
  check "$n keeps /data on its own volume ($data_volume)" test -n "$data_volume" -a "$data_volume" = "$n-data"
  check "$n healthcheck runs redis-cli ping" grep -q 'redis-cli ping' <<<"$(q "services.$n.healthcheck.test")"
  ip=$(q "services.$n.networks.cluster.ipv4_address")
  node_ips+=("$ip")
  check "$n has a static IP in $subnet ($ip)" test -n "$ip" -a "${ip#"$prefix"}" != "$ip"
  check "$n announces its static IP (--cluster-announce-ip $ip)" \
    test "$(arg_after "services.$n.command" --cluster-announce-ip)" = "$ip"
done
check "the six nodes have distinct IPs" test "$(printf '%s\n' "${node_ips[@]}" | sort -u | grep -c .)" -eq 6
is_node_ip() { printf '%s\n' "${node_ips[@]}" | grep -qxF -- "$1"; }

# --- cluster-create --------------------------------------------------------------------------------
create_script=$(q services.cluster-create.command)
check "cluster-create runs an official redis:7 image" grep -qE '^redis:7' <<<"$(q services.cluster-create.image)"
check "cluster-create runs redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes" \
  grep -qE 'redis-cli --cluster create .*--cluster-replicas 1 --cluster-yes' <<<"$create_script"
create_names_all_nodes() {
  local ip; for ip in "${node_ips[@]}"; do grep -qF "$ip" <<<"$create_script" || return 1; done
}
check "cluster-create names the six node IPs" create_names_all_nodes
check "cluster-create skips the create when the cluster exists (cluster_known_nodes)" grep -qF cluster_known_nodes <<<"$create_script"
check "cluster-create waits for cluster_state:ok" grep -qF cluster_state <<<"$create_script"
check "cluster-create runs once (restart: no)" test "$(q services.cluster-create.restart)" = no
for n in "${NODES[@]}"; do
  check "cluster-create waits for $n to be healthy" test "$(q "services.cluster-create.depends_on.$n.condition")" = service_healthy
done

# --- relays ----------------------------------------------------------------------------------------
instances=() host_ports=()
for r in "${RELAYS[@]}"; do
  check "$r is built from the Dockerfile" test "$(q "services.$r.build.dockerfile")" = Dockerfile
  url=$(q "services.$r.environment.EXPIRY_RELAY_REDIS_URL")
  check "$r EXPIRY_RELAY_REDIS_URL names a node ($url)" is_node_ip "$(url_host "$url")"
  check "$r EXPIRY_RELAY_METRICS_PORT=9100" test "$(q "services.$r.environment.EXPIRY_RELAY_METRICS_PORT")" = 9100
  check "$r waits for cluster-create to complete" \
    test "$(q "services.$r.depends_on.cluster-create.condition")" = service_completed_successfully
  instances+=("$(q "services.$r.environment.EXPIRY_RELAY_INSTANCE")")
  host_ports+=("$(q "services.$r.ports" | sed -nE "s/.*'published': ([0-9]+).*'target': 9100.*/\1/p; s/^([0-9.]+:)?([0-9]+):9100(\/tcp)?$/\2/p" | head -n 1)")
done
check "the relays have distinct instance names (${instances[*]})" \
  test "$(printf '%s\n' "${instances[@]}" | sed '/^$/d' | sort -u | grep -c .)" -eq ${#RELAYS[@]}
check "the relays publish distinct host ports for 9100 (${host_ports[*]})" \
  test "$(printf '%s\n' "${host_ports[@]}" | sed '/^$/d' | sort -u | grep -c .)" -eq ${#RELAYS[@]}

# --- cancellers and order-sim ----------------------------------------------------------------------
consumers=()
for c in "${CANCELLERS[@]}"; do
  check "$c runs order-canceller" test "$(q "services.$c.entrypoint" | paste -sd' ')" = order-canceller
  url=$(q "services.$c.environment.ORDER_CANCELLER_REDIS_URL")
  check "$c ORDER_CANCELLER_REDIS_URL names a node ($url)" is_node_ip "$(url_host "$url")"
  check "$c healthcheck probes its own port 9101" grep -qE '127\.0\.0\.1:9101/healthz' <<<"$(q "services.$c.healthcheck.test")"
  consumers+=("$(q "services.$c.environment.ORDER_CANCELLER_CONSUMER")")
done
check "the cancellers have distinct consumer names (${consumers[*]})" \
  test "$(printf '%s\n' "${consumers[@]}" | sed '/^$/d' | sort -u | grep -c .)" -eq ${#CANCELLERS[@]}
check "order-sim runs order-sim" test "$(q services.order-sim.entrypoint | paste -sd' ')" = order-sim
url=$(q services.order-sim.environment.ORDER_SIM_REDIS_URL)
check "order-sim ORDER_SIM_REDIS_URL names a node ($url)" is_node_ip "$(url_host "$url")"

# --- one namespace, one network --------------------------------------------------------------------
namespaces=()
for r in "${RELAYS[@]}"; do namespaces+=("$(q "services.$r.environment.EXPIRY_RELAY_NAMESPACE")"); done
for c in "${CANCELLERS[@]}"; do namespaces+=("$(q "services.$c.environment.ORDER_CANCELLER_NAMESPACE")"); done
namespaces+=("$(q services.order-sim.environment.ORDER_SIM_NAMESPACE)")
check "relays, cancellers and order-sim share one namespace (${namespaces[*]})" \
  test "$(printf '%s\n' "${namespaces[@]}" | sort -u | grep -c .)" -eq 1 -a -n "${namespaces[0]}"
for s in cluster-create "${RELAYS[@]}" "${CANCELLERS[@]}" order-sim; do
  check "$s is on the cluster network" grep -qxF cluster <<<"$(q "services.$s.networks")"
done

finish
