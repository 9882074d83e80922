#!/usr/bin/env bash
# Redis memory per pending task, by layout: what each part of the key layout costs, and how low a
# layout that keeps the per-task trigger key and shadow hash can go (docs/benchmarks.md, "Redis
# memory per pending task"). Starts a private redis-server (repo's redis.conf, so
# hash-max-listpack-value 1024) on a free loopback port, writes N tasks per layout with a Lua
# loop (ids far-100001.., 100-byte payloads, the library's key names), and prints the
# used_memory delta / N. Nothing here goes through the relay: it measures storage only.
# Usage: scripts/memory_floor.sh [N]     (default 100000; needs redis-server and redis-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
case "${1:-}" in
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
N=${1:-100000}
if ! [[ "$N" =~ ^[1-9][0-9]{0,7}$ ]]; then
  echo "memory_floor.sh: N must be a whole number of tasks from 1 to 99999999, not '$N'" >&2
  exit 2
fi
WORK=$(mktemp -d /tmp/expiry-memory.XXXXXX)
trap 'stop_started; rm -rf "$WORK"' EXIT
start_redis "$WORK" --appendonly no --save ''
cli() { "$REDIS_CLI_BIN" -p "$REDIS_PORT" "$@"; }
used() { cli INFO memory | awk -F: '/^used_memory:/ { print $2 }' | tr -d '\r'; }

# layout NAME LUA: LUA runs once per task with `id`, `i`, `p` (the payload) and `created` set.
layout() {
  local name=$1 body=$2 before after
  cli FLUSHALL >/dev/null
  before=$(used)
  cli EVAL "local p = string.rep('x', 100) local created = '1795000000000'
            for i = 1, tonumber(ARGV[1]) do local id = 'far-' .. (100000 + i) $body end return 1" 0 "$N" >/dev/null
  after=$(used)
  printf '| %-62s | %5d |\n' "$name" $(((after - before) / N))
}

Z="redis.call('ZADD', 'expiry:{0}:schedule', 1800000000000 + i, id)"
T="redis.call('SET', 'expiry:{0}:t:' .. id, '1', 'PX', 3600000)"
H="'expiry:{0}:task:' .. id"
echo "Redis memory per pending task, $N tasks, 100-byte payloads ($("$REDIS_SERVER_BIN" --version | awk '{ sub("v=", "", $3); print $3 }'), hash-max-listpack-value $(cli CONFIG GET hash-max-listpack-value | tail -n 1))"
printf '| %-62s | %5s |\n' "layout" "bytes"
printf '|%s|%s|\n' "$(printf -- '-%.0s' {1..64})" "------:"
layout "schedule member only" "$Z"
layout "trigger key only (shared integer 1, with a TTL)" "$T"
layout "trigger key only, without a TTL" "redis.call('SET', 'expiry:{0}:t:' .. id, '1')"
layout "shadow hash only (payload, created_ms)" "redis.call('HSET', $H, 'payload', p, 'created_ms', created)"
layout "today: member + trigger + hash (payload, created_ms)" "$Z $T redis.call('HSET', $H, 'payload', p, 'created_ms', created)"
layout "member + trigger + hash (p, c): one-letter field names" "$Z $T redis.call('HSET', $H, 'p', p, 'c', created)"
layout "member + trigger + hash (payload): no created_ms" "$Z $T redis.call('HSET', $H, 'payload', p)"
layout "member + trigger + hash ('' = payload): the smallest hash" "$Z $T redis.call('HSET', $H, '', p)"
layout "member + trigger + string payload (no hash)" "$Z $T redis.call('SET', $H, p)"
layout "member + hash (payload, created_ms), no trigger key" "$Z redis.call('HSET', $H, 'payload', p, 'created_ms', created)"
