#!/usr/bin/env bash
# A private Redis Cluster for scripts and tests: 3 primaries and 3 replicas of redis-server on
# free loopback ports, each with the repo's redis.conf (keyevents Ex, noeviction, AOF, listpack
# and pubsub-buffer settings) plus cluster-enabled, its own directory, and its pid in
# STARTED_PIDS, so lib.sh's stop_started stops exactly these servers.
#
# Sourced (it sources scripts/lib.sh itself):
#   source scripts/cluster.sh
#   start_cluster DIR [extra redis-server args...]   # sets CLUSTER_PORTS, CLUSTER_URL
#   ...; stop_started
# Run directly, it starts a cluster, prints its URL and waits; Ctrl-C (or SIGTERM) stops it:
#   scripts/cluster.sh run
#
# A node's cluster bus listens on port + 10000, which must be a valid port too: node ports are
# drawn from 20000-44999 (bus ports 30000-54999), and both must be free.

# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

CLUSTER_NODES=6          # 3 primaries, each with 1 replica
CLUSTER_READY_TIMEOUT_S=${CLUSTER_READY_TIMEOUT_S:-60}

# cluster_free_port: prints a loopback port that is free together with its bus port (+10000).
cluster_free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 25000))
    port_in_use "$port" || port_in_use $((port + 10000)) || { echo "$port"; return 0; }
  done
  return 1
}

# node_field PORT FIELD COMMAND...: the value of FIELD in the `field:value` lines that COMMAND
# (INFO replication, CLUSTER INFO) answers on the node on PORT; empty when it does not answer.
node_field() {
  local port=$1 field=$2; shift 2
  redis-cli -p "$port" "$@" 2>/dev/null | tr -d '\r' | sed -n "s/^$field://p"
}

# cluster_ready PORTS...: whether every node reports cluster_state:ok and knows all nodes, and
# every replica's link to its primary is up, with CLUSTER_NODES / 2 replicas in all.
cluster_ready() {
  local port replicas=0
  for port in "$@"; do
    [ "$(node_field "$port" cluster_state CLUSTER INFO)" = ok ] || return 1
    [ "$(node_field "$port" cluster_known_nodes CLUSTER INFO)" = "$#" ] || return 1
    if [ "$(node_field "$port" role INFO replication)" = slave ]; then
      [ "$(node_field "$port" master_link_status INFO replication)" = up ] || return 1
      replicas=$((replicas + 1))
    fi
  done
  [ "$replicas" -eq $(($# / 2)) ]
}

# start_cluster_node DIR PORT [args...]: starts one cluster node in DIR (created) on PORT and
# waits until it answers PING; registers its pid. Returns 1 if it does not come up.
start_cluster_node() {
  local dir=$1 port=$2; shift 2
  local conf; conf="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/redis.conf"
  local pid
  mkdir -p "$dir"
  # A background child of this script is no process group leader, so setsid execs in place
  # and $! stays the server's pid (see start_redis).
  ${REDIS_DETACHED:+setsid} redis-server "$conf" --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize no \
    --logfile "$dir/redis.log" --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
    --cluster-node-timeout 5000 "$@" &
  pid=$!
  await_redis "$port" "$pid" 200
}

# start_cluster DIR [extra redis-server args...]: starts 6 nodes in DIR/node-PORT, joins them
# with `redis-cli --cluster create ... --cluster-replicas 1`, and waits (at most
# CLUSTER_READY_TIMEOUT_S) until cluster_ready. Sets CLUSTER_PORTS (all six) and CLUSTER_URL
# (redis://127.0.0.1:<first port>/0; any node would do). With REDIS_DETACHED=1 every node runs
# in its own session, as in start_redis. On failure the nodes started so far stay in
# STARTED_PIDS for the caller's stop_started.
start_cluster() {
  local dir=$1; shift
  local port attempt addrs=() started
  CLUSTER_PORTS=()
  while [ ${#CLUSTER_PORTS[@]} -lt "$CLUSTER_NODES" ]; do
    started=0
    for attempt in 1 2 3 4 5; do
      port=$(cluster_free_port) || break
      # Not one of ours already (port_in_use cannot see a port we picked but not yet bound).
      [[ " ${CLUSTER_PORTS[*]} " == *" $port "* ]] && continue
      if start_cluster_node "$dir/node-$port" "$port" "$@"; then started=1; break; fi
    done
    if [ "$started" != 1 ]; then
      echo "could not start a cluster node; see $dir/node-*/redis.log" >&2
      return 1
    fi
    CLUSTER_PORTS+=("$port")
  done
  for port in "${CLUSTER_PORTS[@]}"; do addrs+=("127.0.0.1:$port"); done
  if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/cluster-create.log" 2>&1; then
    echo "redis-cli --cluster create failed; see $dir/cluster-create.log" >&2
    return 1
  fi
  local deadline=$((SECONDS + CLUSTER_READY_TIMEOUT_S))
  until cluster_ready "${CLUSTER_PORTS[@]}"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the cluster on ports ${CLUSTER_PORTS[*]} is not ready after ${CLUSTER_READY_TIMEOUT_S} s" \
        "(cluster_state, known nodes or replica links); see $dir/node-*/redis.log" >&2
      return 1
    fi
    sleep 0.1
  done
  CLUSTER_URL="redis://127.0.0.1:${CLUSTER_PORTS[0]}/0"
}

# cluster_primaries: the ports of the nodes that are primaries now, one a line.
cluster_primaries() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    [ "$(node_field "$port" role INFO replication)" = master ] && echo "$port"
  done
  return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    run)
      work=$(mktemp -d /tmp/expiry-cluster.XXXXXX)
      trap 'stop_started; rm -rf "$work"' EXIT
      trap 'exit 0' INT TERM
      REDIS_DETACHED=1 start_cluster "$work"
      echo "Redis Cluster: $CLUSTER_URL (nodes on ports ${CLUSTER_PORTS[*]}; primaries $(cluster_primaries | paste -sd' '); data in $work)"
      echo "Ctrl-C stops it."
      while :; do sleep 1; done
      ;;
    *)
      echo "usage: $0 run    (or source it and call start_cluster DIR)" >&2
      exit 2
      ;;
  esac
fi
