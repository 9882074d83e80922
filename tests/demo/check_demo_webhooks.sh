#!/usr/bin/env bash
# Runs scripts/demo.sh --webhooks (short) against the already-built binaries: the timeouts are
# delivered by expiry-webhook to order-webhook, and the summary must still show 0 wrongly
# cancelled and 0 missed, with every delivery answered 2xx and none dead-lettered.
# Usage: check_demo_webhooks.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
DEMO_SKIP_BUILD=1 BUILD_DIR="$1" DEMO_DURATION_MS=${DEMO_DURATION_MS:-8000} DEMO_RATE=${DEMO_RATE:-50} \
  DEMO_TIMEOUT_MS=${DEMO_TIMEOUT_MS:-2000} \
  DEMO_GRACE_MS=${DEMO_GRACE_MS:-30000} DEMO_READY_S=${DEMO_READY_S:-60} scripts/demo.sh --webhooks >"$out" 2>&1 || status=$?
cat "$out"
passed=0 failed=0
check() {
  if grep -qE "$1" "$out"; then passed=$((passed + 1)); echo "ok   - $2"; else failed=$((failed + 1)); echo "FAIL - $2"; fi
}
check '^webhooks: expiry-webhook .* order-webhook at http://127\.0\.0\.1:[0-9]+/orders/timeout$' "the demo ran in webhook mode"
check '^wrongly cancelled \(paid orders cancelled\): 0$' "no paid order was cancelled"
check '^missed \(unpaid, still pending after timeout \+ grace\): 0$' "no unpaid order was missed"
check '^cancelled by timeout: +[1-9][0-9]*$' "some orders were cancelled by timeout"
check '^paid before timeout: +[1-9][0-9]*$' "some orders were paid"
check '^result: OK$' "order-sim reports OK"
check '^  [0-9]+-[0-9]+ id=order:demo-[0-9]+ via=.* webhook=orders ' "order timeouts carry webhook=orders"
check '^  expiry_webhook_deliveries_total\{endpoint="orders",class="2xx"\} [1-9]' "expiry-webhook delivered timeouts (2xx)"
check '^  expiry_webhook_deliveries_total\{endpoint="orders",class="4xx"\} 0$' "no delivery was refused (4xx: bad signature)"
check '^  expiry_webhook_dead_letters_total\{endpoint="orders"\} 0$' "no delivery was dead-lettered"
[ "$status" -eq 0 ] && { passed=$((passed + 1)); echo "ok   - demo exit code 0"; } || { failed=$((failed + 1)); echo "FAIL - demo exit code $status"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
