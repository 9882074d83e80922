#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer (EXPIRY_RELAY_SANITIZE,
# gcc) into build-asan and runs the unit tests, then the integration tests, whose redis-server
# fixtures start the (instrumented) relay, ctl and canceller binaries. Fails on a failed test
# and on any sanitizer report, including one from a child process whose exit code no test
# looks at: every report is also written under build-asan/sanitizer-logs/ and printed at the end.
# Usage: scripts/sanitize.sh [extra ctest arguments, e.g. -R Relay]
# Env: BUILD_DIR (build-asan), JOBS (2), SANITIZE_LABELS ("unit integration"),
#      SANITIZE_EXCLUDE_LABELS ("chaos|cluster": the chaos and cluster tiers drive the same code
#      as the integration tests, for minutes, and run unsanitized in scripts/test.sh; "" runs
#      them too), SANITIZE_STRICT=1 to also run the tests listed in KNOWN_FAILURES.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-2}
LABELS=${SANITIZE_LABELS:-unit integration}
EXCLUDE_LABELS=${SANITIZE_EXCLUDE_LABELS-chaos|cluster}
started=$SECONDS

# Tests with a known sanitizer finding in the test itself (not in src/), skipped until fixed so
# that the run stays useful; a ctest -E regex. Empty it when the test is fixed.
# (None at the moment: the one found, a payload literal read past its end in relay_test, is fixed.)
KNOWN_FAILURES=''
[ "${SANITIZE_STRICT:-0}" = 1 ] && KNOWN_FAILURES=

scripts/deps.sh
# The benchmark driver is not built: no test runs it, and it is a tenth of the build.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEXPIRY_RELAY_SANITIZE=ON \
  -DEXPIRY_RELAY_BUILD_TESTS=ON -DEXPIRY_RELAY_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
built=$SECONDS

logs=$(cd "$BUILD_DIR" && pwd)/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# halt_on_error: the first report ends the process (UB is also compiled as fatal);
# log_path: reports go to $logs/<tool>.<pid> as well as failing the process, so children's
# reports are seen even when a test only SIGKILLs them; detect_leaks: LeakSanitizer at exit.
asan_common="halt_on_error=1:print_stacktrace=1:strict_string_checks=1:detect_stack_use_after_return=1"
asan_common+=":check_initialization_order=1:detect_leaks=1"
export ASAN_OPTIONS="$asan_common:log_path=$logs/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
export LSAN_OPTIONS="report_objects=1"

# LeakSanitizer needs ptrace-like stop-the-world; some containers forbid it. Check once.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int main(){return 0;}\n' >"$probe/p.c"
if gcc -fsanitize=address "$probe/p.c" -o "$probe/p" 2>/dev/null &&
  ! ASAN_OPTIONS=detect_leaks=1 "$probe/p" 2>&1 | grep -q "LeakSanitizer has encountered a fatal error"; then
  echo "LeakSanitizer: on"
else
  echo "LeakSanitizer does not work here (ptrace restricted?): leaks are left to scripts/leakcheck.sh"
  export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
fi

status=0
cd "$BUILD_DIR"
for label in $LABELS; do
  t0=$SECONDS
  jobs=1  # integration tests are timing-sensitive: one at a time
  [ "$label" = unit ] && jobs=$JOBS
  echo "== ctest -L $label (sanitized)"
  exclude=()
  [ -z "$EXCLUDE_LABELS" ] || exclude=(-LE "$EXCLUDE_LABELS")
  if [ -n "$KNOWN_FAILURES" ]; then
    exclude+=(-E "$KNOWN_FAILURES")
    echo "skipped (known finding, see KNOWN_FAILURES in $0): $KNOWN_FAILURES"
  fi
  if ! ctest -L "$label" -j "$jobs" --output-on-failure "${exclude[@]}" "$@"; then
    status=1
    echo "ctest -L $label: FAILED (see above; rerun single tests with ctest -R NAME -V)"
  fi
  echo "ctest -L $label took $((SECONDS - t0)) s"
done

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  status=1
  echo "== sanitizer reports ($(echo "$reports" | wc -l) files in $logs)"
  for f in $reports; do
    echo "--- $f"
    head -n 60 "$f"
  done
fi
echo "sanitize: build $((built - started)) s, tests $((SECONDS - built)) s, $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
