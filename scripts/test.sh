#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs unit and integration tests.
# Integration tests start their own redis-server processes on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure "$@"
