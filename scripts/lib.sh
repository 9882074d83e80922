# Shared shell helpers for scripts/*.sh: a private redis-server on a free loopback port and
# cleanup of exactly the processes a script started (by pid).
# Env: EXPIRY_TEST_REDIS_SERVER / EXPIRY_TEST_REDIS_CLI run another server and CLI than the
# system's redis-server and redis-cli (the server matrix, docs/servers.md), as in the tests.

REDIS_SERVER_BIN=${EXPIRY_TEST_REDIS_SERVER:-redis-server}
REDIS_CLI_BIN=${EXPIRY_TEST_REDIS_CLI:-redis-cli}

STARTED_PIDS=()

# Kills the processes this script started, newest first, then waits for them.
stop_started() {
  local i pid
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${STARTED_PIDS[$i]}
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  STARTED_PIDS=()
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# await_redis PORT PID TRIES: waits (TRIES x 50 ms) until the redis-server PID just started on
# PORT answers PING, then registers it in STARTED_PIDS; otherwise kills and reaps it, returns 1.
await_redis() {
  local port=$1 pid=$2 tries=$3
  for _ in $(seq "$tries"); do
    if "$REDIS_CLI_BIN" -p "$port" PING 2>/dev/null | grep -q PONG; then
      STARTED_PIDS+=("$pid")
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return 1
}

# start_redis DIR [extra redis-server args...]: starts redis-server with the repo's redis.conf
# on a free port in DIR; sets REDIS_PORT and REDIS_URL. Waits until it answers PING.
# With REDIS_DETACHED=1 the server runs in its own session (setsid), so a Ctrl-C in the
# terminal reaches only the script, which stops it by pid when it is done (redis-server would
# otherwise shut down on the terminal's SIGINT at once).
start_redis() {
  local dir=$1; shift
  local conf; conf="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/redis.conf"
  local attempt port pid
  for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    port_in_use "$port" && continue
    # A background child of this script is no process group leader, so setsid execs in place
    # and $! stays the server's pid.
    ${REDIS_DETACHED:+setsid} "$REDIS_SERVER_BIN" "$conf" --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize no \
      --logfile "$dir/redis.log" "$@" &
    pid=$!
    if await_redis "$port" "$pid" 100; then
      REDIS_PORT=$port
      REDIS_URL="redis://127.0.0.1:$port/0"
      return 0
    fi
  done
  echo "could not start redis-server; see $dir/redis.log" >&2
  return 1
}

# make_test_certs DIR: a throwaway CA and a server certificate for 127.0.0.1 and localhost
# (EC P-256, 2 days), signed by it, in DIR: ca.crt, server.crt, server.key. For the scripts' TLS
# runs only; tests/support/tls_certs.h makes the tests' own.
make_test_certs() {
  local dir=$1 ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  mkdir -p "$dir"
  openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 -subj /CN=expiry-test-ca 2>/dev/null &&
    openssl req "${ec[@]}" -keyout "$dir/server.key" -out "$dir/server.csr" -subj /CN=localhost 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/server.ext" &&
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -out "$dir/server.crt" -days 2 -extfile "$dir/server.ext" 2>/dev/null ||
    { echo "openssl could not make test certificates in $dir" >&2; return 1; }
}

# enable_tls_port CERT_DIR: after start_redis, opens a TLS port on the same server too (the
# certificates of make_test_certs, no client certificates required); sets REDIS_TLS_URL and
# REDIS_TLS_FLAGS (the tls_* flags the programs need).
enable_tls_port() {
  local dir=$1 port
  port=$(free_port) || return 1
  "$REDIS_CLI_BIN" -p "$REDIS_PORT" CONFIG SET tls-cert-file "$dir/server.crt" tls-key-file "$dir/server.key" \
    tls-ca-cert-file "$dir/ca.crt" tls-auth-clients no >/dev/null &&
    "$REDIS_CLI_BIN" -p "$REDIS_PORT" CONFIG SET tls-port "$port" | grep -q OK ||
    { echo "redis-server would not open a TLS port (built without TLS?)" >&2; return 1; }
  REDIS_TLS_URL="rediss://127.0.0.1:$port/0"
  REDIS_TLS_FLAGS=(--tls-ca-cert-file "$dir/ca.crt")
}

# free_port: prints a loopback port nothing listens on.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    port_in_use "$port" || { echo "$port"; return 0; }
  done
  return 1
}

# http_get PORT PATH: prints the response body of GET http://127.0.0.1:PORT/PATH (no curl needed).
http_get() {
  local body
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
  body=$(cat <&3)
  exec 3<&-
  printf '%s\n' "${body#*$'\r\n\r\n'}"
}

# configure_sanitizer_tree DIR: configures DIR as the one sanitizer tree: clang with
# AddressSanitizer + UndefinedBehaviorSanitizer (EXPIRY_RELAY_SANITIZE) that also builds the
# libFuzzer targets (EXPIRY_RELAY_FUZZ) and not expiry-bench. scripts/sanitize.sh,
# scripts/fuzz.sh and scripts/leakcheck.sh lsan share it. A tree configured with another
# compiler (an older gcc sanitizer tree) is started afresh.
configure_sanitizer_tree() {
  local dir=$1
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
    echo "$dir was configured with another compiler: starting it afresh with clang++" >&2
    rm -rf "$dir"
  fi
  cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEXPIRY_RELAY_SANITIZE=ON -DEXPIRY_RELAY_FUZZ=ON -DEXPIRY_RELAY_BUILD_TESTS=ON \
    -DEXPIRY_RELAY_BUILD_BENCH=OFF >/dev/null
}

# start_with_metrics LOG DEADLINE_S PROGRAM ARGS...: starts PROGRAM ARGS --metrics-port P (P a
# free port) in its own session, logging to LOG, and waits (up to DEADLINE_S seconds) until its
# /readyz answers "ready". A port another process took between the choice and the program's
# bind ("cannot listen": likely when tests run in parallel) is chosen again, up to 5 times.
# Sets METRICS_PORT and appends the pid to STARTED_PIDS. Returns 1 when the program exited for
# another reason (the log's tail on stderr), 2 when it still runs but is not ready in time.
start_with_metrics() {
  local log=$1 deadline_s=$2
  shift 2
  local port pid _attempt
  for _attempt in 1 2 3 4 5; do
    port=$(free_port) || return 1
    setsid "$@" --metrics-port "$port" >"$log" 2>&1 &
    pid=$!
    STARTED_PIDS+=("$pid")
    for _ in $(seq $((deadline_s * 20))); do
      if [ "$(http_get "$port" /readyz 2>/dev/null)" = ready ]; then
        METRICS_PORT=$port
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done 2>/dev/null
    if kill -0 "$pid" 2>/dev/null; then
      METRICS_PORT=$port
      return 2
    fi
    wait "$pid" 2>/dev/null || true
    # It exited and was reaped: drop its pid (the last one added) so it is never signalled again.
    STARTED_PIDS=("${STARTED_PIDS[@]:0:${#STARTED_PIDS[@]}-1}")
    grep -q "cannot listen" "$log" || { tail -n 5 "$log" >&2; return 1; }
  done
  echo "$1: its metrics port was taken 5 times in a row" >&2
  return 1
}
