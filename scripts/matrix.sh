#!/usr/bin/env bash
# The server matrix (docs/servers.md): builds Valkey 8.1 and Redis 8.0 once (scripts/servers.sh),
# then runs the ctest label "matrix" (the function library, the relay, one plain chaos run, part
# of the cluster tier, the relay through Sentinel) against each of them in turn, through
# EXPIRY_TEST_REDIS_SERVER / _SENTINEL / _CLI. The system's Redis 7.0 runs the same tests in the
# main run of scripts/test.sh. Prints one line per server with its result and wall time; fails
# if any server failed (after trying all of them) or could not be built.
# Usage: scripts/matrix.sh [valkey|redis]... [-- extra ctest arguments]   (default: both)
# Env: BUILD_DIR (build), TEST_JOBS (default: 2 per core), SKIP_SERVERS_BUILD=1 (the servers are
#      built already, e.g. by CI in the background: fail if they are not).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

servers=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do servers+=("$1"); shift; done
[ $# -eq 0 ] || shift
[ ${#servers[@]} -gt 0 ] || servers=(valkey redis)

# name -> the prefix and program names scripts/servers.sh builds.
declare -A PREFIX=([valkey]=valkey-8.1.1 [redis]=redis-8.0.2)
declare -A PROGRAM=([valkey]=valkey [redis]=redis)
for s in "${servers[@]}"; do
  [ -n "${PREFIX[$s]:-}" ] || { echo "matrix: unknown server '$s' (known: valkey redis)" >&2; exit 2; }
done

if [ "${SKIP_SERVERS_BUILD:-0}" != 1 ]; then
  BUILD_DIR=$BUILD_DIR scripts/servers.sh "${servers[@]}"
fi
DEPS=$(cd "$BUILD_DIR/_deps" 2>/dev/null && pwd) || { echo "matrix: no $BUILD_DIR/_deps" >&2; exit 1; }

cd "$BUILD_DIR"
summary=()
failed=0
for s in "${servers[@]}"; do
  bin=$DEPS/${PREFIX[$s]}/bin
  p=${PROGRAM[$s]}
  if [ ! -x "$bin/$p-server" ] || [ ! -x "$bin/$p-cli" ]; then
    echo "matrix: $s is not built ($bin/$p-server; scripts/servers.sh builds it)" >&2
    exit 1
  fi
  version=$("$bin/$p-server" --version | grep -o 'v=[^ ]*')
  echo
  echo "== matrix: ctest -L matrix against $p-server $version ($bin)"
  started=$SECONDS
  rc=0
  EXPIRY_TEST_REDIS_SERVER=$bin/$p-server EXPIRY_TEST_REDIS_SENTINEL=$bin/$p-sentinel EXPIRY_TEST_REDIS_CLI=$bin/$p-cli \
    ctest --output-on-failure -L matrix -j "${TEST_JOBS:-$(($(nproc) * 2))}" "$@" || rc=$?
  if [ "$rc" -eq 0 ]; then
    summary+=("$s $version: passed in $((SECONDS - started)) s")
  else
    failed=1
    summary+=("$s $version: FAILED in $((SECONDS - started)) s: $(paste -sd' ' Testing/Temporary/LastTestsFailed.log 2>/dev/null)")
  fi
done
echo
echo "== matrix summary"
printf '  %s\n' "${summary[@]}"
exit "$failed"
