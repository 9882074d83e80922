#!/usr/bin/env bash
# Runs `scripts/demo.sh --cluster` (short) against the already-built binaries: a private
# 3-primary + 3-replica Redis Cluster, two relays, two cancellers, order-sim. Checks its summary:
# 0 wrongly cancelled and 0 missed, with some orders paid and some cancelled, both relays
# serving every primary, and the timeouts forwarded into the bucket streams.
# Usage: check_demo_cluster.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
DEMO_SKIP_BUILD=1 BUILD_DIR="$1" DEMO_DURATION_MS=${DEMO_DURATION_MS:-8000} DEMO_RATE=${DEMO_RATE:-50} \
  DEMO_TIMEOUT_MS=${DEMO_TIMEOUT_MS:-2000} \
  DEMO_GRACE_MS=${DEMO_GRACE_MS:-30000} DEMO_READY_S=${DEMO_READY_S:-60} scripts/demo.sh --cluster >"$out" 2>&1 || status=$?
cat "$out"
passed=0 failed=0
check() {
  if grep -qE "$1" "$out"; then passed=$((passed + 1)); echo "ok   - $2"; else failed=$((failed + 1)); echo "FAIL - $2"; fi
}
count() { grep -cE "$1" "$out" || true; }
check '^Redis Cluster: redis://127\.0\.0\.1:[0-9]+/0 ' "the demo runs on its private cluster"
check '^wrongly cancelled \(paid orders cancelled\): 0$' "no paid order was cancelled"
check '^missed \(unpaid, still pending after timeout \+ grace\): 0$' "no unpaid order was missed"
check '^cancelled by timeout: +[1-9][0-9]*$' "some orders were cancelled by timeout"
check '^paid before timeout: +[1-9][0-9]*$' "some orders were paid"
check '^result: OK$' "order-sim reports OK"
check '^  [0-9]+-[0-9]+ id=order:demo-[0-9]+ via=' "order timeouts were forwarded to the bucket streams"
for r in demo-relay-1 demo-relay-2; do
  check "^$r metrics \\(selected\\):\$" "$r served its metrics"
done
nodes=$(count '^  expiry_relay_nodes 3$')
[ "$nodes" -eq 2 ] && { passed=$((passed + 1)); echo "ok   - both relays serve the 3 primaries"; } ||
  { failed=$((failed + 1)); echo "FAIL - both relays serve the 3 primaries (expiry_relay_nodes 3 seen $nodes times)"; }
# Every cancellation came from a forwarded task, and no task was forwarded by both relays more
# often than there were orders. (A paid order's task may still fire when the payment races its
# timeout; the canceller then leaves the paid order alone, so forwarded may exceed cancelled.)
forwarded=0
while read -r n; do forwarded=$((forwarded + n)); done < <(sed -nE 's/^  expiry_relay_tasks_forwarded_total\{via="[a-z]+"\} ([0-9]+)$/\1/p' "$out")
cancelled=$(sed -nE 's/^cancelled by timeout: +([0-9]+)$/\1/p' "$out")
created=$(sed -nE 's/^orders created: +([0-9]+)$/\1/p' "$out")
if [ -n "$cancelled" ] && [ -n "$created" ] && [ "$forwarded" -ge "$cancelled" ] && [ "$forwarded" -le "$created" ]; then
  passed=$((passed + 1)); echo "ok   - the relays forwarded $forwarded tasks (cancelled $cancelled, created $created)"
else
  failed=$((failed + 1)); echo "FAIL - the relays forwarded $forwarded tasks (cancelled ${cancelled:-?}, created ${created:-?})"
fi
[ "$status" -eq 0 ] && { passed=$((passed + 1)); echo "ok   - demo exit code 0"; } || { failed=$((failed + 1)); echo "FAIL - demo exit code $status"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
