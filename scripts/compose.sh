#!/usr/bin/env bash
# Runs the docker-compose deployments for real and checks what a user would see: builds the image
# from the repo's Dockerfile (the multi-stage path users run), brings docker-compose.yml up, and
# fails unless every check below holds. Everything it starts is removed again with
# `docker-compose down -v` (containers, the project's network and its volumes), on failure and
# on Ctrl-C too.
#
#   1. the engine: Debian's docker.io and docker-compose, dockerd started when none runs, and the
#      base images no registry here serves made from Debian's packages (scripts/container_engine.sh);
#   2. the image: built once with `docker-compose build`; its size (at most IMAGE_MAX_MB), a
#      non-root user, and `--version`;
#   3. docker-compose.yml: Redis with the repo's redis.conf, two relays, two cancellers, order-sim,
#      expiry-api, expiry-webhook and order-webhook, every app container read-only; each service
#      with a healthcheck turns healthy; order-sim's summary says 0 wrongly cancelled and 0 missed,
#      with relay-1 killed (SIGKILL) mid-run, brought back by its restart policy and healthy again,
#      and a cancel lateness p99 of at most LATENESS_P99_MAX_MS through the kill; logs are JSON;
#   4. a task PUT through the API on the published port with the example write token reaches
#      order-webhook, signed, which verifies it and cancels the demo order it names;
#   5. a second order-sim run through `docker restart` of Redis (its AOF on the volume): 0 wrongly
#      cancelled, 0 missed;
#   6. `docker-compose stop`: every program drains and exits 0 within its stop_grace_period;
#   7. with --tls, docker-compose.tls.yml (mutual TLS, certificates made by docs/security.md's own
#      commands); with --cluster, docker-compose.cluster.yml (6 nodes, 2 relays, relay-1 killed as
#      order-sim starts). Each: 0 wrongly cancelled, 0 missed.
# Published ports bind 127.0.0.1; containers talk only to each other on the project's network.
#
# Usage: scripts/compose.sh [--tls] [--cluster] [--all] [--no-main] [--build-only]
#   --all: the three files. --no-main: skip docker-compose.yml (with --tls or --cluster).
#   --build-only: steps 1 and 2 only (CI builds the image this way in the background, while the
#   tests run, and leaves the daemon running for its compose stage).
# A daemon this script started is stopped at its end (not with --build-only).
# Env: SIM_RATE (50 orders/s), SIM_DURATION_MS (15000), SIM_TIMEOUT_MS (3000), IMAGE_MAX_MB (120),
#      LATENESS_P99_MAX_MS (100), COMPOSE_PROJECT (expiry-compose-check), DOCKER (docker).
# Exit: 0 when every check passed, 1 when one failed, 2 on a usage error, 130 on Ctrl-C.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/container_engine.sh
source scripts/container_engine.sh

MAIN=1 TLS=0 CLUSTER=0 BUILD_ONLY=0
USAGE="usage: $0 [--tls] [--cluster] [--all] [--no-main] [--build-only]"
for arg in "$@"; do
  case $arg in
    --tls) TLS=1 ;;
    --cluster) CLUSTER=1 ;;
    --all) TLS=1 CLUSTER=1 ;;
    --no-main) MAIN=0 ;;
    --build-only) BUILD_ONLY=1 ;;
    -h | --help) echo "$USAGE"; exit 0 ;;
    *) echo "$USAGE" >&2; exit 2 ;;
  esac
done

SIM_RATE=${SIM_RATE:-50}
SIM_DURATION_MS=${SIM_DURATION_MS:-15000}
SIM_TIMEOUT_MS=${SIM_TIMEOUT_MS:-3000}
# The compose files read order-sim's knobs from these (`up` and `run` alike).
export ORDER_SIM_RATE=$SIM_RATE ORDER_SIM_DURATION_MS=$SIM_DURATION_MS ORDER_SIM_TIMEOUT_MS=$SIM_TIMEOUT_MS
IMAGE_MAX_MB=${IMAGE_MAX_MB:-120}
LATENESS_P99_MAX_MS=${LATENESS_P99_MAX_MS:-100}
PROJECT=${COMPOSE_PROJECT:-expiry-compose-check}
IMAGE=expiry-relay:local
WORK=$(mktemp -d /tmp/expiry-compose.XXXXXX)
FILE=
FAILED=0
UP_FILES=()  # the compose files brought up, for the cleanup

ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*" >&2; FAILED=1; }
compose() { docker-compose -p "$PROJECT" -f "$FILE" "$@"; }
container_of() { compose ps -q "$1" 2>/dev/null | head -n 1; }
inspect() { "$DOCKER" inspect -f "$1" "$2" 2>/dev/null; }

# Removes every container, network and volume of the project, whichever file brought it up.
down_all() {
  local f
  for f in "${UP_FILES[@]}"; do
    FILE=$f compose down -v --remove-orphans --timeout 30 >/dev/null 2>&1 || true
  done
  UP_FILES=()
}
cleanup() {
  down_all
  # Anything the project left (a container a failed `down` missed) is removed by its label.
  "$DOCKER" ps -aq --filter "label=com.docker.compose.project=$PROJECT" | xargs -r "$DOCKER" rm -f >/dev/null 2>&1
  "$DOCKER" volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | xargs -r "$DOCKER" volume rm >/dev/null 2>&1
  "$DOCKER" network ls -q --filter "label=com.docker.compose.project=$PROJECT" | xargs -r "$DOCKER" network rm >/dev/null 2>&1
  [ "$BUILD_ONLY" = 1 ] || stop_engine
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted: stopping" >&2; exit 130' INT TERM

# wait_until DEADLINE_S WHAT COMMAND...: runs COMMAND every 0.5 s until it succeeds; fails (and
# says WHAT) after DEADLINE_S seconds.
wait_until() {
  local limit=$1 deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      bad "$what: not within $limit s"
      return 1
    fi
    sleep 0.5
  done
}

# healthy SERVICE: its container's healthcheck says healthy.
healthy() { [ "$(inspect '{{.State.Health.Status}}' "$(container_of "$1")")" = healthy ]; }
# exited SERVICE: its container has stopped.
exited() { [ "$(inspect '{{.State.Status}}' "$(container_of "$1")")" = exited ]; }

# bring_up FILE: `docker-compose up -d` with order-sim's knobs; records FILE for the cleanup.
bring_up() {
  FILE=$1
  UP_FILES+=("$FILE")
  echo "== $(basename "$FILE"): docker-compose up -d"
  compose up -d --no-build 2>&1 | sed 's/^/  /'
  [ "${PIPESTATUS[0]}" = 0 ] || { bad "docker-compose up on $(basename "$FILE")"; compose logs --tail 30 >&2; return 1; }
}

# await_healthy SERVICE...: every SERVICE's healthcheck says healthy within 120 s.
await_healthy() {
  local s
  for s in "$@"; do
    wait_until 120 "$s is healthy" healthy "$s" && ok "$s is healthy"
  done
}

# check_sim_summary SERVICE|CONTAINER LABEL [P99_MAX]: order-sim's summary in its logs says 0 wrongly
# cancelled, 0 missed and result OK (and a p99 lateness of at most P99_MAX ms).
check_sim_summary() {
  local c=$1 label=$2 p99_max=${3:-} logs wrong missed p99 code
  logs=$("$DOCKER" logs "$c" 2>&1)
  code=$(inspect '{{.State.ExitCode}}' "$c")
  echo "-- order-sim summary ($label):"
  grep -E '^(orders created|paid before|cancelled by|payment refused|cancel lateness|wrongly|missed|left pending|result|cut short)' \
    <<<"$logs" | sed 's/^/  /'
  wrong=$(sed -n 's/^wrongly cancelled.*: *\([0-9]*\)$/\1/p' <<<"$logs")
  missed=$(sed -n 's/^missed.*: *\([0-9]*\)$/\1/p' <<<"$logs")
  p99=$(sed -n 's|^cancel lateness p50/p99/max (ms): *[-0-9]* / *\([-0-9]*\) / .*|\1|p' <<<"$logs")
  [ "$wrong" = 0 ] && [ "$missed" = 0 ] && grep -qx 'result: OK' <<<"$logs" && [ "$code" = 0 ] ||
    { bad "order-sim ($label): wrongly cancelled '${wrong:-?}', missed '${missed:-?}', exit ${code:-?}"; return 1; }
  ok "order-sim ($label): 0 wrongly cancelled, 0 missed"
  if [ -n "$p99_max" ]; then
    [ -n "$p99" ] && [ "$p99" -le "$p99_max" ] ||
      { bad "order-sim ($label): cancel lateness p99 ${p99:-?} ms, above $p99_max ms"; return 1; }
    ok "order-sim ($label): cancel lateness p99 $p99 ms (at most $p99_max)"
  fi
}

# kill_when_sim_runs SERVICE SIM_CONTAINER AFTER_S: SIGKILLs the program in SERVICE's container
# once order-sim has run AFTER_S seconds (its progress lines), as a crash or the OOM killer would.
# Its restart policy then starts it again. (`docker kill` would not do: Docker takes it for a
# manual stop and leaves the container stopped.)
kill_when_sim_runs() {
  local service=$1 sim=$2 after=$3 pid
  sim_progress() { "$DOCKER" logs "$sim" 2>&1 | grep -q "^order-sim: $after s,"; }
  wait_until 120 "order-sim runs $after s" sim_progress || return 1
  pid=$(inspect '{{.State.Pid}}' "$(container_of "$service")")
  [ -n "$pid" ] && [ "$pid" != 0 ] && kill -KILL "$pid" ||
    { bad "could not kill $service (pid '${pid:-?}')"; return 1; }
  ok "killed $service's program (SIGKILL, pid $pid on the host) $after s into order-sim's run"
}

# came_back SERVICE: the restart policy started SERVICE again and it is healthy.
came_back() {
  local c
  c=$(container_of "$1")
  restarted() { [ "$(inspect '{{.RestartCount}}' "$c")" -ge 1 ] && [ "$(inspect '{{.State.Running}}' "$c")" = true ]; }
  wait_until 60 "$1 restarted by its restart policy" restarted || return 1
  wait_until 120 "$1 healthy after its restart" healthy "$1" || return 1
  ok "$1 came back by its restart policy (restarts: $(inspect '{{.RestartCount}}' "$c")) and is healthy"
}

# --- the image --------------------------------------------------------------------------------
check_image() {
  local bytes mb user version
  bytes=$(inspect '{{.Size}}' "$IMAGE")
  mb=$(( (bytes + 999999) / 1000000 ))
  echo "image $IMAGE: $mb MB ($bytes bytes)"
  [ "$mb" -le "$IMAGE_MAX_MB" ] && ok "image size $mb MB (at most $IMAGE_MAX_MB)" || bad "image size $mb MB, above $IMAGE_MAX_MB"
  user=$(inspect '{{.Config.User}}' "$IMAGE")
  [ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] && ok "image runs as user $user" || bad "image runs as root"
  version=$("$DOCKER" run --rm --network none "$IMAGE" --version 2>&1)
  grep -q 'expiry-relay' <<<"$version" && ok "docker run --rm $IMAGE --version: $version" ||
    bad "--version printed: $version"
}

# --- docker-compose.yml --------------------------------------------------------------------------
APP_SERVICES=(relay-1 relay-2 canceller-1 canceller-2 api webhook order-webhook)

# app_checks: read-only root filesystems, a non-root uid, JSON logs.
app_checks() {
  local s c uid before=$FAILED not_json
  FAILED=0
  for s in "${APP_SERVICES[@]}"; do
    c=$(container_of "$s")
    [ "$(inspect '{{.HostConfig.ReadonlyRootfs}}' "$c")" = true ] || bad "$s: root filesystem is writable"
    uid=$(inspect '{{.State.Pid}}' "$c" | xargs -I{} awk '/^Uid:/ { print $2 }' /proc/{}/status 2>/dev/null)
    [ "$uid" = 10001 ] || bad "$s: runs as uid '${uid:-?}', not 10001"
  done
  [ "$FAILED" = 1 ] || ok "${APP_SERVICES[*]}: read-only root filesystem, uid 10001"
  for s in relay-1 relay-2 canceller-1 canceller-2 api webhook; do
    # Every line the program printed is a JSON object.
    not_json=$("$DOCKER" logs "$(container_of "$s")" 2>&1 | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if not line.strip(): continue
    n += 1
    try:
        if isinstance(json.loads(line), dict): continue
    except ValueError: pass
    print(line.rstrip()[:200]); sys.exit(1)
if n == 0: print("(no log lines)"); sys.exit(1)
') && ok "$s logs JSON lines" || bad "$s: a log line is not JSON: $not_json"
  done
  [ "$before" = 0 ] || FAILED=1
}

# api_to_webhook: a demo order, and its timeout PUT through the API (published port, example write
# token) with webhook "orders": order-webhook verifies the signed delivery and cancels the order.
api_to_webhook() {
  local token id="compose-api-$$" code status
  token=$(awk '$1 == "write" { print $2; exit }' deploy/api/tokens.example)
  [ -n "$token" ] || { bad "no example write token in deploy/api/tokens.example"; return 1; }
  compose exec -T redis redis-cli HSET "order:$id" status pending >/dev/null ||
    { bad "could not create demo order order:$id"; return 1; }
  code=$(curl -sS -o "$WORK/put.json" -w '%{http_code}' -X PUT "http://127.0.0.1:8080/v1/tasks/order:$id" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"delay_ms\": 1000, \"payload\": \"{\\\"order_id\\\":\\\"$id\\\"}\", \"webhook\": \"orders\"}")
  case $code in
    2??) ok "PUT /v1/tasks/order:$id through the API on 127.0.0.1:8080: $code" ;;
    *) bad "PUT /v1/tasks/order:$id answered $code: $(cat "$WORK/put.json")"; return 1 ;;
  esac
  order_cancelled() {
    status=$(compose exec -T redis redis-cli HGET "order:$id" status | tr -d '\r')
    [ "$status" = cancelled ]
  }
  wait_until 60 "order-webhook cancelled order:$id from its signed webhook" order_cancelled || {
    compose logs --tail 20 webhook order-webhook >&2
    return 1
  }
  ok "order-webhook verified the signed delivery of order:$id and cancelled the order ($(
    compose exec -T redis redis-cli HGET "order:$id" task_id | tr -d '\r'))"
}

# redis_restart_run: a second order-sim run, with `docker restart` of Redis 5 s into it.
redis_restart_run() {
  local sim="${PROJECT}_sim_restart"
  "$DOCKER" rm -f "$sim" >/dev/null 2>&1
  compose run -d --no-deps --name "$sim" -e ORDER_SIM_RUN_ID="restart-$$" order-sim >/dev/null ||
    { bad "docker-compose run order-sim"; return 1; }
  sim_progress() { "$DOCKER" logs "$sim" 2>&1 | grep -q '^order-sim: 5 s,'; }
  wait_until 120 "the second order-sim runs 5 s" sim_progress || return 1
  compose restart redis >/dev/null 2>&1 && ok "docker restart redis, 5 s into the second order-sim run" ||
    { bad "docker restart redis"; return 1; }
  wait_until 60 "redis healthy after its restart" healthy redis || return 1
  sim_done() { [ "$(inspect '{{.State.Status}}' "$sim")" = exited ]; }
  wait_until $((SIM_DURATION_MS / 1000 + 180)) "the second order-sim finished" sim_done || return 1
  check_sim_summary "$sim" "Redis restarted"
  echo "  (order-sim connected to Redis again $("$DOCKER" logs "$sim" 2>&1 | grep -c 'connecting to Redis again') times)"
  "$DOCKER" rm -f "$sim" >/dev/null 2>&1
}

# stop_drains: `docker-compose stop` ends every program with exit code 0 (SIGTERM, drained).
stop_drains() {
  local s c code
  compose stop --timeout 30 >/dev/null 2>&1
  for s in "${APP_SERVICES[@]}"; do
    c=$(container_of "$s")
    code=$(inspect '{{.State.ExitCode}}' "$c")
    [ "$code" = 0 ] || bad "$s exited $code on SIGTERM"
  done
  [ "$FAILED" = 1 ] || ok "docker-compose stop: ${APP_SERVICES[*]} drained and exited 0"
}

run_main() {
  local started=$SECONDS sim
  bring_up "$ROOT/docker-compose.yml" || return 1
  sim=$(container_of order-sim)
  await_healthy redis "${APP_SERVICES[@]}"
  kill_when_sim_runs relay-1 "$sim" 5
  came_back relay-1
  wait_until $((SIM_DURATION_MS / 1000 + 180)) "order-sim finished" exited order-sim
  check_sim_summary "$sim" "relay-1 killed" "$LATENESS_P99_MAX_MS"
  app_checks
  api_to_webhook
  redis_restart_run
  stop_drains
  down_all
  echo "== docker-compose.yml: $((SECONDS - started)) s"
}

# --- docker-compose.tls.yml ----------------------------------------------------------------------
# The certificates, made by the commands docs/security.md gives (its first sh block after the
# compose example's heading), in $WORK/tls.
make_tls_dir() {
  local script
  script=$(awk '/^### Example: docker-compose.tls.yml/ { on = 1 } on && /^```sh$/ { inblock = 1; next }
                inblock && /^```$/ { exit } inblock { print }' docs/security.md)
  [ -n "$script" ] || { bad "docs/security.md has no certificate commands"; return 1; }
  (cd "$WORK" && bash -e -c "$script") >/dev/null 2>&1 || { bad "docs/security.md's certificate commands failed"; return 1; }
  export EXPIRY_TLS_DIR=$WORK/tls
}

run_tls() {
  local started=$SECONDS
  make_tls_dir || return 1
  bring_up "$ROOT/docker-compose.tls.yml" || return 1
  await_healthy redis relay canceller
  wait_until $((SIM_DURATION_MS / 1000 + 180)) "order-sim finished (TLS)" exited order-sim
  check_sim_summary "$(container_of order-sim)" "mutual TLS"
  down_all
  echo "== docker-compose.tls.yml: $((SECONDS - started)) s"
}

# --- docker-compose.cluster.yml ------------------------------------------------------------------
run_cluster() {
  local started=$SECONDS sim
  bring_up "$ROOT/docker-compose.cluster.yml" || return 1
  sim=$(container_of order-sim)
  await_healthy relay-1 relay-2 canceller-1 canceller-2
  kill_when_sim_runs relay-1 "$sim" 1
  came_back relay-1
  wait_until $((SIM_DURATION_MS / 1000 + 180)) "order-sim finished (cluster)" exited order-sim
  check_sim_summary "$sim" "cluster, relay-1 killed" "$LATENESS_P99_MAX_MS"
  down_all
  echo "== docker-compose.cluster.yml: $((SECONDS - started)) s"
}

# --- main -----------------------------------------------------------------------------------------
started=$SECONDS
ensure_engine || exit 1
ensure_base_images || exit 1
FILE=$ROOT/docker-compose.yml
# Any container, network or volume an interrupted earlier run left.
down_files=("$ROOT/docker-compose.yml" "$ROOT/docker-compose.tls.yml" "$ROOT/docker-compose.cluster.yml")
UP_FILES=("${down_files[@]}")
EXPIRY_TLS_DIR=$WORK down_all
echo "== docker-compose build (the repo's Dockerfile) ..."
build_started=$SECONDS
if ! compose build --quiet relay-1 >"$WORK/build.log" 2>&1; then
  tail -n 60 "$WORK/build.log" >&2
  echo "FAILED: the image build" >&2
  exit 1
fi
echo "image built in $((SECONDS - build_started)) s"
check_image
[ "$BUILD_ONLY" = 1 ] && { [ "$FAILED" = 0 ]; exit; }
[ "$MAIN" = 0 ] || run_main
[ "$TLS" = 0 ] || run_tls
[ "$CLUSTER" = 0 ] || run_cluster
echo "compose checks: $((SECONDS - started)) s in all"
if [ "$FAILED" != 0 ]; then
  echo "compose checks FAILED" >&2
  exit 1
fi
echo "compose checks passed"
