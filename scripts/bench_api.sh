#!/usr/bin/env bash
# The HTTP API's write bench (docs/benchmarks.md, "HTTP API and webhooks"): a private
# redis-server (repo's redis.conf, no persistence) and expiry-api (2 worker threads) on free
# loopback ports, then `wrk -t2 -c64 -d10s --latency -s put.lua` (PUT /v1/tasks/{id}, unique ids,
# 64 keep-alive connections) and, against the same server, redis-benchmark sending the same
# FCALL expiry_v2_schedule directly over 64 connections (one task id, replaced each time). Prints the load before, wrk's and
# redis-benchmark's figures, and the tasks the schedule holds (each 2xx PUT wrote one). Stops
# only the processes it started, by pid.
# Usage: scripts/bench_api.sh [RUNS] [extra expiry-api flags, e.g. --max-inflight 0 for the
#   blocking path, --audit-max-entries 0 without the audit trail]
# Env: BUILD_DIR (default build), WRK_DURATION (default 10s), BENCH_KEEP=1 keeps the work directory,
#   BENCH_API_CLUSTER=1: against a private 3-primary Redis Cluster (scripts/cluster.sh) instead;
#   the tasks written are counted with expiry-ctl stats, and redis-benchmark is not run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
CLUSTER=${BENCH_API_CLUSTER:-0}
[ "$CLUSTER" = 0 ] || source scripts/cluster.sh

BUILD_DIR=${BUILD_DIR:-build}
RUNS=${1:-1}
[ $# -eq 0 ] || shift
API_FLAGS=("$@")
API_BIN=$BUILD_DIR/src/api/expiry-api
for tool in wrk redis-benchmark redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: scripts/deps.sh --ci installs it" >&2; exit 1; }
done
[ -x "$API_BIN" ] || cmake --build "$BUILD_DIR" --target expiry-api -j2
CTL_BIN=$BUILD_DIR/src/ctl/expiry-ctl
[ "$CLUSTER" = 0 ] || [ -x "$CTL_BIN" ] || cmake --build "$BUILD_DIR" --target expiry-ctl -j2

WORK=$(mktemp -d /tmp/expiry-bench-api.XXXXXX)
cleanup() {
  stop_started
  [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TOKEN=bench-write-token-$RANDOM$RANDOM$RANDOM
printf 'write %s\n' "$TOKEN" >"$WORK/tokens"
if [ "$CLUSTER" = 0 ]; then
  REDIS_DETACHED=1 start_redis "$WORK" --save "" --appendonly no
else
  start_cluster "$WORK" --save "" --appendonly no
  REDIS_URL=$CLUSTER_URL
  echo "cluster: 3 primaries and 3 replicas on ports ${CLUSTER_PORTS[*]}"
fi
API_PORT=$(free_port)
"$API_BIN" --listen "127.0.0.1:$API_PORT" --tokens-file "$WORK/tokens" --redis-url "$REDIS_URL" --threads 2 \
  --log-level warn "${API_FLAGS[@]}" >"$WORK/api.log" 2>&1 &
STARTED_PIDS+=($!)
for _ in $(seq 200); do
  [ "$(http_get "$API_PORT" /healthz 2>/dev/null)" = "ok" ] && break
  kill -0 "${STARTED_PIDS[-1]}" 2>/dev/null || { cat "$WORK/api.log" >&2; exit 1; }
  sleep 0.05
done

PAYLOAD=$(printf 'p%.0s' $(seq 100))
for run in $(seq "$RUNS"); do
  echo "== run $run of $RUNS; load before: $(uptime | sed 's/.*load average: //')"
  EXPIRY_API_TOKEN=$TOKEN wrk -t2 -c64 -d"${WRK_DURATION:-10s}" --latency -s scripts/bench_api/put.lua \
    "http://127.0.0.1:$API_PORT" | sed -n '/Latency Distribution/,/Requests\/sec/p;/Non-2xx/p;/Socket errors/p'
  if [ "$CLUSTER" = 1 ]; then
    echo "the namespace now holds $("$CTL_BIN" stats --json --redis-url "$REDIS_URL" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["pending"])') pending tasks"
    continue
  fi
  echo "schedule now holds $(redis-cli -p "$REDIS_PORT" ZCARD 'expiry:{0}:schedule') tasks"
  echo "-- redis-benchmark, the same FCALL direct, 64 connections; load before: $(uptime | sed 's/.*load average: //')"
  # One id, replaced by every call: redis-benchmark 7.0 draws each __rand_int__ of a command
  # apart, and the library refuses keys that do not name the call's id.
  redis-benchmark -p "$REDIS_PORT" -c 64 -n 200000 -q \
    FCALL expiry_v2_schedule 3 'expiry:{0}:schedule' 'expiry:{0}:t:rb-1' 'expiry:{0}:task:rb-1' rb-1 delay 3600000 \
    "$PAYLOAD" '' 0 | tr '\r' '\n' | grep -o '[0-9.]* requests per second.*'
done
