#!/usr/bin/env bash
# Runs the benchmark (docs/benchmarks.md): builds expiry-bench if needed, starts a private
# redis-server (repo's redis.conf, --appendonly no), runs every scenario, prints the tables and
# writes the JSON; stops everything it started, by pid. Exit code: expiry-bench's (non-zero if any
# run lost or duplicated a task).
# Usage: scripts/bench.sh [--quick] [--cluster] [--tls] [--no-bullmq] [--no-sidekiq] [--guard FILE] [--json FILE] [--plot] [other expiry-bench flags, e.g. --only steady]
#   --plot: also draws docs/bench-lateness-cdf.png from the steady runs (needs gnuplot).
#   --cluster: also starts a private 3-primary + 3-replica Redis Cluster (scripts/cluster.sh,
#     --appendonly no like the single Redis) and runs the cluster scenario, which compares the
#     relay on the single Redis with the relay on the cluster; alone, only that scenario (add
#     --only to choose others as well, e.g. --only steady,cluster).
#   --tls: then runs the TLS-cost scenarios again (steady and burst; BENCH_TLS_ONLY to choose)
#     over rediss:// to a TLS port of the same redis-server (throwaway certificates), and writes
#     their JSON next to the plain one as *-tls.json: TLS against plain in one run.
#   BullMQ side by side: after expiry-bench, the same scenarios (those of --only that have a BullMQ
#     peer: bulk, idle, steady, burst, kill) run against BullMQ on the same
#     redis-server (src/bench/bullmq/, npm-installed into $BUILD_DIR/_deps/bullmq-bench when
#     missing), its JSON goes next to the relay's as *-bullmq.json, and a table puts both side by
#     side. Without node >= 20 or npm, or if the install fails, it says "BullMQ peer skipped: <why>";
#     it never changes the exit code. --no-bullmq skips it.
#   Sidekiq side by side: then the steady and memory loads against Sidekiq 6.4 (src/bench/sidekiq/,
#     Debian's ruby-sidekiq, not installed by scripts/deps.sh), optional the same way: "Sidekiq peer
#     skipped: <why>" without it. --no-sidekiq skips it.
#   Cost: with node, src/bench/cost_report.js then prints the steady Redis CPU per task by call
#     type beside the peers', and the memory per pending task. --guard FILE (the CI's
#     .ci/bench-baseline.json) makes the run fail when the steady Redis CPU ratio relay/BullMQ or
#     the memory per task is more than the file's tolerance (25 %) worse than its baseline.
# Env: BUILD_DIR (default build), BENCH_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source scripts/cluster.sh

BUILD_DIR=${BUILD_DIR:-build}
ARGS=() JSON= PLOT=0 CLUSTER=0 ONLY=0 ONLY_LIST= TLS=0 QUICK=0 BULLMQ=1 SIDEKIQ=1 GUARD=
while [ $# -gt 0 ]; do
  case $1 in
    --cluster) CLUSTER=1; shift ;;
    --tls) TLS=1; shift ;;
    --quick) QUICK=1; ARGS+=("$1"); shift ;;
    --no-bullmq) BULLMQ=0; shift ;;
    --no-sidekiq) SIDEKIQ=0; shift ;;
    --only) ONLY=1; ONLY_LIST=${2:-}; ARGS+=("$1" "${2:-}"); shift; [ $# -eq 0 ] || shift ;;
    --only=*) ONLY=1; ONLY_LIST=${1#--only=}; ARGS+=("$1"); shift ;;
    --json) JSON=$2; shift 2 ;;
    --json=*) JSON=${1#--json=}; shift ;;
    --plot) PLOT=1; shift ;;
    --guard) GUARD=$2; shift 2 ;;
    --guard=*) GUARD=${1#--guard=}; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done

if [ ! -x "$BUILD_DIR/src/bench/expiry-bench" ] || [ ! -x "$BUILD_DIR/src/relay/expiry-relay" ] ||
   [ ! -x "$BUILD_DIR/src/ctl/expiry-ctl" ]; then
  BUILD_DIR=$BUILD_DIR scripts/build.sh >&2
else
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target expiry-bench expiry-relay expiry-ctl order-canceller >&2
fi
BIN=$(cd "$BUILD_DIR/src" && pwd)

WORK=$(mktemp -d /tmp/expiry-bench.XXXXXX)
cleanup() {
  stop_started
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -n "$JSON" ] || JSON="$BUILD_DIR/bench-results.json"

# The BullMQ scenarios matching expiry-bench's --only (all without it; none for --cluster alone).
bullmq_scenarios() {
  local list=bulk,idle,steady,burst,kill
  if [ "$ONLY" = 1 ]; then list=$ONLY_LIST; elif [ "$CLUSTER" = 1 ]; then list=; fi
  local s out=
  for s in ${list//,/ }; do
    case $s in bulk|idle|steady|burst|kill) out+=${out:+,}$s ;; esac
  done
  echo "$out"
}

# Runs BullMQ's side against $REDIS_URL and prints the side-by-side table. Never fails the run.
run_bullmq_peer() {
  local scenarios dir=$BUILD_DIR/_deps/bullmq-bench src=src/bench/bullmq bjson=${JSON%.json}-bullmq.json
  scenarios=$(bullmq_scenarios)
  if [ -z "$scenarios" ]; then echo "BullMQ peer skipped: none of its scenarios is in this run" >&2; return 0; fi
  if ! command -v node >/dev/null 2>&1; then echo "BullMQ peer skipped: node is not installed" >&2; return 0; fi
  if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
    echo "BullMQ peer skipped: node $(node --version) is older than 20" >&2; return 0
  fi
  if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules/bullmq" ]; then
    if ! command -v npm >/dev/null 2>&1; then echo "BullMQ peer skipped: npm is not installed" >&2; return 0; fi
    echo "BullMQ peer: npm ci into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir" && cp "$src/package.json" "$src/package-lock.json" "$dir/"
    if ! (cd "$dir" && npm ci --no-audit --no-fund >npm-ci.log 2>&1); then
      rm -f "$dir/package-lock.json"  # retried next time
      echo "BullMQ peer skipped: npm ci failed (see $dir/npm-ci.log)" >&2; return 0
    fi
  fi
  local flags=(--redis-url "$REDIS_URL" --json "$bjson" --only "$scenarios") relay_ok=0
  # expiry-bench's JSON of this run (not one left by an earlier run): its sizes and figures
  if [ "$JSON" -nt "$WORK/started" ]; then relay_ok=1; flags+=(--relay-json "$JSON"); fi
  [ "$QUICK" = 0 ] || flags+=(--quick)
  echo "== BullMQ side by side on $REDIS_URL: $scenarios" >&2
  NODE_PATH="$dir/node_modules" node "$src/bullmq-bench.js" "${flags[@]}" &
  local pid=$! code=0
  STARTED_PIDS+=("$pid")
  wait "$pid" || code=$?
  if [ "$code" != 0 ]; then echo "BullMQ peer FAILED (exit $code): no BullMQ figures in this run" >&2; return 0; fi
  if [ "$relay_ok" = 1 ]; then
    node "$src/compare.js" "$JSON" "$bjson" || true
  else
    echo "BullMQ peer: no relay JSON from this run to compare with" >&2
  fi
  echo "BullMQ JSON: $bjson"
}
mkdir -p "$(dirname "$JSON")"

touch "$WORK/started"
start_redis "$WORK" --appendonly no
echo "$(basename "$REDIS_SERVER_BIN") $("$REDIS_SERVER_BIN" --version | grep -o 'v=[^ ]*') on $REDIS_URL; nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if [ "$CLUSTER" = 1 ]; then
  start_cluster "$WORK/cluster" --appendonly no
  echo "Redis Cluster on ports ${CLUSTER_PORTS[*]} (primaries $(cluster_primaries | paste -sd' '))" >&2
  ARGS+=(--cluster-url "$CLUSTER_URL")
  [ "$ONLY" = 1 ] || ARGS+=(--only cluster)
fi

# expiry-bench runs in the background so that a signal reaches our trap (and its relays die with
# it through PR_SET_PDEATHSIG).
"$BIN/bench/expiry-bench" --redis-url "$REDIS_URL" --bin-dir "$BIN" --work-dir "$WORK" --json "$JSON" \
  ${ARGS[@]+"${ARGS[@]}"} &
BENCH_PID=$!
STARTED_PIDS+=("$BENCH_PID")
status=0
wait "$BENCH_PID" || status=$?

[ "$BULLMQ" = 0 ] || run_bullmq_peer
[ "$SIDEKIQ" = 0 ] || { source src/bench/sidekiq/run.sh && run_sidekiq_peer; }

# The cost table, and the regression guard: a guard that cannot run fails the run.
if [ "$JSON" -nt "$WORK/started" ] && command -v node >/dev/null 2>&1; then
  COST_ARGS=(--relay "$JSON")
  for peer in bullmq sidekiq; do
    [ ! "${JSON%.json}-$peer.json" -nt "$WORK/started" ] || COST_ARGS+=("--$peer" "${JSON%.json}-$peer.json")
  done
  [ -z "$GUARD" ] || COST_ARGS+=(--baseline "$GUARD")
  node src/bench/cost_report.js "${COST_ARGS[@]}" || { echo "cost guard FAILED (baseline $GUARD)" >&2; status=1; }
elif [ -n "$GUARD" ]; then
  echo "cost guard FAILED: it needs node and this run's JSON" >&2; status=1
fi

if [ "$TLS" = 1 ]; then
  make_test_certs "$WORK/tls"
  enable_tls_port "$WORK/tls"
  TLS_ARGS=() skip=0  # ARGS without the scenario choice and the cluster
  for a in ${ARGS[@]+"${ARGS[@]}"}; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case $a in
      --only|--cluster-url) skip=1 ;;
      --only=*|--cluster-url=*) ;;
      *) TLS_ARGS+=("$a") ;;
    esac
  done
  echo "== the same Redis over TLS ($REDIS_TLS_URL): ${BENCH_TLS_ONLY:-steady,burst}" >&2
  "$BIN/bench/expiry-bench" --redis-url "$REDIS_TLS_URL" "${REDIS_TLS_FLAGS[@]}" --bin-dir "$BIN" \
    --work-dir "$WORK" --json "${JSON%.json}-tls.json" ${TLS_ARGS[@]+"${TLS_ARGS[@]}"} --only "${BENCH_TLS_ONLY:-steady,burst}" &
  BENCH_PID=$!
  STARTED_PIDS+=("$BENCH_PID")
  wait "$BENCH_PID" || status=$?
fi

if [ "$PLOT" = 1 ]; then
  if command -v gnuplot >/dev/null 2>&1 && ls "$WORK"/steady-cdf-*.dat >/dev/null 2>&1; then
    gnuplot -e "datadir='$WORK'; out='docs/bench-lateness-cdf.png'" docs/bench-lateness-cdf.gp &&
      echo "plot: docs/bench-lateness-cdf.png" >&2
  else
    echo "plot skipped: needs gnuplot (apt-get install -y gnuplot-nox) and the steady scenario" >&2
  fi
fi
exit "$status"
