#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything (programs, tests,
# expiry-bench), and runs every ctest test: unit, integration, chaos, ACL, TLS, Sentinel, the
# cluster tier, the deploy checks and the demo. Integration tests start their own redis-server
# processes on free loopback ports. The tests mostly wait on Redis and the programs, so they run
# TEST_JOBS at a time (default: 2 per core); the few that assert wall-clock bounds hold the
# ctest resource lock "wall_clock" (tests/CMakeLists.txt), so no two of them overlap.
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L unit or -R Relay]
# Env: BUILD_DIR (build), TEST_JOBS, SKIP_DEPS=1 / SKIP_BUILD=1 (CI's own stages did them).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${SKIP_DEPS:-0}" = 1 ] || scripts/deps.sh
[ "${SKIP_BUILD:-0}" = 1 ] || scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${TEST_JOBS:-$(($(nproc) * 2))}" "$@"
