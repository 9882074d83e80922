#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything (programs, tests,
# expiry-bench), and runs every ctest test: unit, integration, chaos, ACL, TLS, Sentinel, the
# cluster tier, the deploy checks and the demo. Integration tests start their own redis-server
# processes on free loopback ports. The tests mostly wait on Redis and the programs, so they run
# TEST_JOBS at a time (default: 2 per core); the few that assert wall-clock bounds hold the
# ctest resource lock "wall_clock" (tests/CMakeLists.txt), so no two of them overlap.
# Then the server matrix (scripts/matrix.sh, docs/servers.md): the tests labelled "matrix" again
# against Valkey 8.1 and Redis 8.0, built once from Debian 13's sources (scripts/servers.sh).
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L unit or -R Relay]
#   With extra arguments only that ctest run is made, without the server matrix.
# Env: BUILD_DIR (build), TEST_JOBS, SKIP_DEPS=1 / SKIP_BUILD=1 (CI's own stages did them),
#      SKIP_MATRIX=1 (CI runs the matrix as its own stage).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${SKIP_DEPS:-0}" = 1 ] || scripts/deps.sh
[ "${SKIP_BUILD:-0}" = 1 ] || scripts/build.sh
matrix=0
[ $# -gt 0 ] || [ "${SKIP_MATRIX:-0}" = 1 ] || matrix=1
# The servers first: a server that cannot be fetched or built fails the run before any test.
[ "$matrix" = 0 ] || scripts/servers.sh
cd "${BUILD_DIR:-build}"
rc=0
ctest --output-on-failure -j "${TEST_JOBS:-$(($(nproc) * 2))}" "$@" || rc=$?
if [ "$rc" -ne 0 ] && [ -s Testing/Temporary/LastTestsFailed.log ]; then
  # The failures' own output again, last, where a truncated log still shows it (the run above
  # interleaves it with every other test's).
  while IFS=: read -r _ name; do
    echo
    echo "== output of the failed test $name (last 60 lines)"
    awk -v t="$name" '$0 ~ ("^[0-9]+/[0-9]+ Test: " t "$") {on = 1; next} on && /^<end of output>$/ {exit} on' \
      Testing/Temporary/LastTest.log | tail -n 60
  done <Testing/Temporary/LastTestsFailed.log
fi
if [ "$matrix" = 1 ]; then
  cd - >/dev/null
  SKIP_SERVERS_BUILD=1 scripts/matrix.sh || rc=1
fi
exit "$rc"
