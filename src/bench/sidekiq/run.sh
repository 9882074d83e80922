# Sidekiq as a second peer beside BullMQ, for scripts/bench.sh to `source` (after scripts/lib.sh).
#
# run_sidekiq_peer: runs sidekiq-bench.rb against $REDIS_URL for the scenarios of this run that
# it has (steady, memory; memory is BullMQ's and the relay's part of bulk), writes
# ${JSON%.json}-sidekiq.json, and prints the relay / BullMQ / Sidekiq table when the relay's and
# BullMQ's JSON of this run exist. Without ruby or the sidekiq gem (Debian: ruby-sidekiq) it says
# "Sidekiq peer skipped: <why>". Always returns 0.
# Reads: REDIS_URL, JSON, QUICK, WORK (its file "started" marks the run's start), ONLY and
# ONLY_LIST, CLUSTER (as bullmq_scenarios does); appends the bench's pid to STARTED_PIDS.

SIDEKIQ_PEER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The Sidekiq scenarios matching expiry-bench's --only (all without it; none for --cluster alone).
sidekiq_scenarios() {
  local list=steady,bulk
  if [ "${ONLY:-0}" = 1 ]; then list=$ONLY_LIST; elif [ "${CLUSTER:-0}" = 1 ]; then list=; fi
  local s out=
  for s in ${list//,/ }; do
    case $s in
      steady) out+=${out:+,}steady ;;
      bulk|memory) [[ ,$out, == *,memory,* ]] || out+=${out:+,}memory ;;
    esac
  done
  echo "$out"
}

run_sidekiq_peer() {
  local scenarios sjson=${JSON%.json}-sidekiq.json bjson=${JSON%.json}-bullmq.json
  scenarios=$(sidekiq_scenarios)
  if [ -z "$scenarios" ]; then echo "Sidekiq peer skipped: none of its scenarios is in this run" >&2; return 0; fi
  if ! command -v ruby >/dev/null 2>&1; then echo "Sidekiq peer skipped: ruby is not installed (apt-get install -y ruby-sidekiq)" >&2; return 0; fi
  if ! ruby -e 'require "sidekiq"' >/dev/null 2>&1; then
    echo "Sidekiq peer skipped: the sidekiq gem is not installed (apt-get install -y ruby-sidekiq)" >&2; return 0
  fi
  local flags=(--redis-url "$REDIS_URL" --json "$sjson" --only "$scenarios") relay_ok=0
  # expiry-bench's JSON of this run (not one left by an earlier run): its sizes and figures
  if [ "$JSON" -nt "$WORK/started" ]; then relay_ok=1; flags+=(--relay-json "$JSON"); fi
  [ "${QUICK:-0}" = 0 ] || flags+=(--quick)
  echo "== Sidekiq side by side on $REDIS_URL: $scenarios" >&2
  rm -f "$sjson"
  ruby "$SIDEKIQ_PEER_DIR/sidekiq-bench.rb" "${flags[@]}" &
  local pid=$! code=0
  STARTED_PIDS+=("$pid")
  wait "$pid" || code=$?
  if [ "$code" != 0 ]; then echo "Sidekiq peer FAILED (exit $code): no Sidekiq figures in this run" >&2; return 0; fi
  if [ "$relay_ok" = 1 ] && [ "$bjson" -nt "$WORK/started" ] && command -v node >/dev/null 2>&1; then
    node "$SIDEKIQ_PEER_DIR/../bullmq/compare.js" "$JSON" "$bjson" "$sjson" || true
  else
    echo "Sidekiq peer: no relay and BullMQ JSON of this run (or no node) to compare with" >&2
  fi
  echo "Sidekiq JSON: $sjson"
}
