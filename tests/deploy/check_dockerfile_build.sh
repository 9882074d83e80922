#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: how the Dockerfile builds and runs the programs. The build stage configures
# without tests and without expiry-bench and installs with `cmake --install ... --strip`
# (never copying from build/src paths); .dockerignore admits every file the install rules
# read; the runtime stage binds the metrics endpoints of the relay and the canceller to
# 0.0.0.0 (reachable through `docker run -p`); and the HEALTHCHECK command, run here with
# /bin/sh, passes when EXPIRY_RELAY_METRICS_PORT=0 (server off) and fails when nothing answers.
# .dockerignore also keeps build/ (scripts/hiredis.sh's Debian 12 hiredis in build/_deps would
# shadow Debian 13's libhiredis-dev) and tls/ (the TLS example's keys) out of the context.
#
# Usage: tests/deploy/check_dockerfile_build.sh [DOCKERFILE]   (default: the repository's)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DOCKERFILE=${1:-$ROOT/Dockerfile}
DOCKERIGNORE=$(dirname "$DOCKERFILE")/.dockerignore

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if [ ! -r "$DOCKERFILE" ]; then
  fail "cannot read $DOCKERFILE"
  finish
fi

instructions=$(dockerfile_instructions "$DOCKERFILE")
last_from=$(grep -niE '^[[:space:]]*FROM[[:space:]]' <<<"$instructions" | tail -n 1 | cut -d: -f1)
final_stage=$(tail -n +"${last_from:-1}" <<<"$instructions")
runs=$(grep -E '^[[:space:]]*RUN[[:space:]]' <<<"$instructions")

# --- build stage: configure, build, install ---------------------------------------------------
configure=$(grep -E 'cmake[[:space:]]+(-S|-B)' <<<"$runs")
check "the build configures with -DEXPIRY_RELAY_BUILD_TESTS=OFF" grep -qE -- '-DEXPIRY_RELAY_BUILD_TESTS=OFF' <<<"$configure"
check "the build configures with -DEXPIRY_RELAY_BUILD_BENCH=OFF (no expiry-bench in the image)" \
  grep -qE -- '-DEXPIRY_RELAY_BUILD_BENCH=OFF' <<<"$configure"
installs_stripped() { grep -E 'cmake[[:space:]]+--install[[:space:]]' <<<"$runs" | grep -E -- '--strip' | grep -qE -- '--prefix[[:space:]=]+/usr/local'; }
check "the build installs with cmake --install ... --strip --prefix /usr/local" installs_stripped
no_build_paths() { ! grep -qE 'build/src/' <<<"$instructions"; }
check "no instruction copies programs from build/src paths" no_build_paths

# --- .dockerignore admits what the install rules read ----------------------------------------
# The sources of install(FILES ...) in the top-level CMakeLists.txt, e.g. redis.conf; files the
# build generates (${PROJECT_BINARY_DIR}/...: the function library made one file from its parts in
# src/lua/expiry/, the package's config) come from the repository's src/, which the context holds.
install_sources=$(awk '/install\(FILES/ { sub(/.*install\(FILES[[:space:]]*/, ""); sub(/[[:space:]]*DESTINATION.*/, ""); print }' \
  "$ROOT/CMakeLists.txt" | tr -s ' \t' '\n' | sed '/^$/d' | grep -v '^\${[A-Z_]*BINARY_DIR}/')
if [ -z "$install_sources" ]; then
  fail "no install(FILES ...) rule found in CMakeLists.txt"
elif [ ! -r "$DOCKERIGNORE" ]; then
  fail "cannot read $DOCKERIGNORE"
else
  for f in $install_sources; do
    top=${f%%/*}
    check ".dockerignore admits $f (!$top)" grep -qxF "!$top" "$DOCKERIGNORE"
  done
  # keeps_out DIR: an allowlist (`*`) that never re-admits DIR.
  keeps_out() { grep -qxF '*' "$DOCKERIGNORE" && ! grep -qE "^!/?$1(/|\*|\$)" "$DOCKERIGNORE"; }
  for d in build tls; do
    check ".dockerignore keeps $d/ out of the build context" keeps_out "$d"
  done
fi

# --- runtime stage: metrics reachable from outside the container ------------------------------
env_lines=$(grep -E '^[[:space:]]*ENV[[:space:]]' <<<"$final_stage" | tr -d "\"'")
for var in EXPIRY_RELAY_METRICS_BIND ORDER_CANCELLER_METRICS_BIND; do
  check "runtime stage sets $var=0.0.0.0" grep -qE "(^|[[:space:]])$var=0\.0\.0\.0([[:space:]]|\$)" <<<"$env_lines"
done

# --- HEALTHCHECK: skipped at port 0, failing when nothing answers ------------------------------
health=$(grep -iE '^[[:space:]]*HEALTHCHECK[[:space:]]' <<<"$final_stage" | tail -n 1)
cmd=$(sed -E 's/^.*[[:space:]]CMD[[:space:]]+//' <<<"$health")
if [ -z "$health" ] || [ "$cmd" = "$health" ]; then
  fail "runtime stage has no HEALTHCHECK ... CMD"
  finish
fi
if [ "${cmd:0:1}" = "[" ]; then
  fail "HEALTHCHECK uses the exec form; it cannot read EXPIRY_RELAY_METRICS_PORT at check time"
  finish
fi
# A loopback port nobody listens on: a random high port that refuses a connection.
closed_port=
for _ in 1 2 3 4 5 6 7 8 9 10; do
  candidate=$((20000 + RANDOM % 40000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then closed_port=$candidate; break; fi
done
# Docker runs the shell form as `/bin/sh -c CMD` with the container's environment.
run_health() { env -i PATH="$PATH" EXPIRY_RELAY_METRICS_PORT="$1" timeout 10 /bin/sh -c "$cmd" >/dev/null 2>&1; }
health_fails() { ! run_health "$1"; }
check "HEALTHCHECK passes when EXPIRY_RELAY_METRICS_PORT=0 (metrics off)" run_health 0
if [ -z "$closed_port" ]; then
  fail "found no closed loopback port to probe"
else
  check "HEALTHCHECK fails when nothing answers on EXPIRY_RELAY_METRICS_PORT ($closed_port)" \
    health_fails "$closed_port"
fi
probes_healthz() { grep -qF '127.0.0.1:' <<<"$cmd" && grep -qF '/healthz' <<<"$cmd" && grep -qF 'EXPIRY_RELAY_METRICS_PORT:-9100' <<<"$cmd"; }
check "HEALTHCHECK probes 127.0.0.1:\$EXPIRY_RELAY_METRICS_PORT/healthz (default 9100)" probes_healthz

finish
