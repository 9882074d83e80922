#!/usr/bin/env bash
# Deploy test: `promtool check rules` on deploy/prometheus/alerts.yml, `promtool check config`
# on deploy/prometheus/prometheus.yml (which loads alerts.yml again, as Prometheus will), and
# `promtool test rules` with the alerts' unit tests (tests/deploy/alerts_test.yml).
# promtool: $PROMTOOL, else BUILD_DIR/_deps/promtool/bin/promtool, which scripts/promtool.sh
# extracts there first when it is missing (only this check needs it), else promtool on PATH.
# Fails, never skips, without it.
# Usage: tests/deploy/check_prometheus_rules.sh [BUILD_DIR]
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
cd "$ROOT" || exit 1
# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if [ -z "${PROMTOOL:-}" ] && [ ! -x "$BUILD_DIR/_deps/promtool/bin/promtool" ] && ! command -v promtool >/dev/null 2>&1; then
  BUILD_DIR=$BUILD_DIR "$ROOT/scripts/promtool.sh" || true
fi
promtool=
for candidate in "${PROMTOOL:-}" "$BUILD_DIR/_deps/promtool/bin/promtool" "$(command -v promtool 2>/dev/null)"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] && { promtool=$candidate; break; }
done
if [ -z "$promtool" ]; then
  fail "promtool not found: run scripts/promtool.sh (BUILD_DIR=$BUILD_DIR), or set PROMTOOL"
  finish
fi
echo "# $("$promtool" --version 2>&1 | head -n 1)"

check "promtool check rules deploy/prometheus/alerts.yml" "$promtool" check rules deploy/prometheus/alerts.yml
check "promtool check config deploy/prometheus/prometheus.yml" "$promtool" check config deploy/prometheus/prometheus.yml

# The alerts' unit tests (tests/deploy/alerts_test.yml) run against a copy of alerts.yml without
# its annotations: promtool compares annotations too, and they are prose.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '
  /^ *annotations:[ ]*$/ { match($0, /^ */); skip = RLENGTH; next }
  skip >= 0 { match($0, /^ */); if (RLENGTH > skip && $0 !~ /^[ ]*$/) next; skip = -1 }
  { print }
' skip=-1 deploy/prometheus/alerts.yml >"$work/alerts.yml"
cp tests/deploy/alerts_test.yml "$work/"
check "promtool test rules tests/deploy/alerts_test.yml (each alert fires after its for:, not on healthy series)" \
  "$promtool" test rules "$work/alerts_test.yml"
finish
