#!/usr/bin/env bash
# Measures how late tasks fire: starts a private redis-server (repo's redis.conf) and one relay,
# schedules N tasks (default 5000) due over S seconds (default 10) with `expiry-ctl schedule
# --file`, optionally with K unrelated keys holding long TTLs (which make Redis's expired events
# late), waits for all of them in the stream, and prints lateness = fired_ms - due_ms.
# Usage: scripts/lateness.sh [N] [S] [K]     (uses ./build; run scripts/build.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
N=${1:-5000} S=${2:-10} K=${3:-0}
BIN=$(cd "${BUILD_DIR:-build}/src" && pwd)
WORK=$(mktemp -d /tmp/expiry-lateness.XXXXXX)
trap 'stop_started; rm -rf "$WORK"' EXIT
start_redis "$WORK" --appendonly no
export EXPIRY_RELAY_REDIS_URL=$REDIS_URL
if [ "$K" -gt 0 ]; then
  redis-cli -p "$REDIS_PORT" EVAL "for i=1,tonumber(ARGV[1]) do redis.call('SET','unrelated:'..i,'x','EX',3600) end" 0 "$K" >/dev/null
fi
"$BIN/relay/expiry-relay" --instance lateness >"$WORK/relay.log" 2>&1 &
STARTED_PIDS+=($!)
awk -v n="$N" -v s="$S" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%d\",\"delay_ms\":%d,\"payload\":\"p%d\"}\n", i, 1000 + int(i * s * 1000 / n), i }' >"$WORK/tasks.jsonl"
"$BIN/ctl/expiry-ctl" schedule --file "$WORK/tasks.jsonl" 2>/dev/null
"$BIN/ctl/expiry-ctl" tail --from 0 --count "$N" --timeout-ms 30000 >"$WORK/entries.txt"
grep -o 'late_ms=[0-9-]*' "$WORK/entries.txt" | cut -d= -f2 | sort -n >"$WORK/late.txt"
count=$(wc -l <"$WORK/late.txt")
pct() { awk -v p="$1" -v n="$count" 'NR == (int(p * n / 100 + 0.999999) > 0 ? int(p * n / 100 + 0.999999) : 1) { print; exit }' "$WORK/late.txt"; }
echo "tasks=$N spread_s=$S unrelated_ttl_keys=$K forwarded=$count via_sweep=$(grep -c 'via=sweep' "$WORK/entries.txt") via_event=$(grep -c 'via=event' "$WORK/entries.txt" || true)"
echo "lateness_ms p50=$(pct 50) p99=$(pct 99) max=$(tail -n 1 "$WORK/late.txt")"
