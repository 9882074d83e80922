#!/usr/bin/env bash
# Runs scripts/demo.sh (short) against the already-built binaries and checks its summary:
# 0 wrongly cancelled and 0 missed, with some orders paid and some cancelled, and the timeout
# tasks in their own stream orders:timeouts (not the relay's default stream).
# Usage: check_demo.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
DEMO_SKIP_BUILD=1 BUILD_DIR="$1" DEMO_DURATION_MS=${DEMO_DURATION_MS:-8000} DEMO_RATE=${DEMO_RATE:-50} \
  DEMO_TIMEOUT_MS=${DEMO_TIMEOUT_MS:-2000} \
  DEMO_GRACE_MS=${DEMO_GRACE_MS:-30000} DEMO_READY_S=${DEMO_READY_S:-60} scripts/demo.sh >"$out" 2>&1 || status=$?
cat "$out"
passed=0 failed=0
check() {
  if grep -qE "$1" "$out"; then passed=$((passed + 1)); echo "ok   - $2"; else failed=$((failed + 1)); echo "FAIL - $2"; fi
}
check '^wrongly cancelled \(paid orders cancelled\): 0$' "no paid order was cancelled"
check '^missed \(unpaid, still pending after timeout \+ grace\): 0$' "no unpaid order was missed"
check '^cancelled by timeout: +[1-9][0-9]*$' "some orders were cancelled by timeout"
check '^paid before timeout: +[1-9][0-9]*$' "some orders were paid"
check '^result: OK$' "order-sim reports OK"
check 'expiry_relay_tasks_forwarded_total\{via="sweep"\} [1-9]' "relay metrics were served"
check '^last timeout tasks in orders:timeouts:$' "the demo shows the order timeouts' stream"
check '^  [0-9]+-[0-9]+ id=order:demo-[0-9]+ via=' "order timeouts were forwarded to orders:timeouts"
check '^  stream: orders:timeouts$' "expiry-ctl stats reports orders:timeouts"
check '^  stream_length: [1-9][0-9]*$' "orders:timeouts holds the fired timeouts"
check '^    [0-9]+-[0-9]+ id=remind:demo-2 via=(sweep|event) ' "the fresh reminder was delivered after the resume"
check '^    [0-9]+-[0-9]+ .* task=remind:demo-1 reason=late ' "the stale reminder went to the dead letters as late"
[ "$status" -eq 0 ] && { passed=$((passed + 1)); echo "ok   - demo exit code 0"; } || { failed=$((failed + 1)); echo "FAIL - demo exit code $status"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
