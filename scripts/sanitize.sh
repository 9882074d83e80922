#!/usr/bin/env bash
# The sanitizer tree: builds with clang, AddressSanitizer + UndefinedBehaviorSanitizer, into
# build-asan (the same tree builds the libFuzzer targets: scripts/fuzz.sh), then runs its tests:
# the unit tests, the in-process async tier (tests/integration/io), the function-library tier
# (tests/integration/lua) and the programs' tests (relay, ctl, orders, TLS), whose fixtures
# start the instrumented programs (tests/CMakeLists.txt lists what this tree holds; the chaos,
# cluster, Sentinel and ACL tiers drive the same code for minutes and run unsanitized in
# scripts/test.sh). Fails on a failed test and on any sanitizer report, including one from a
# child process whose exit code no test looks at: every report is also written under
# build-asan/sanitizer-logs/ and printed at the end.
# Usage: scripts/sanitize.sh [--build-only] [extra ctest arguments, e.g. -R Relay]
# Env: BUILD_DIR (build-asan), JOBS (nproc: build jobs), TEST_JOBS (2 per core),
#      SKIP_DEPS=1, SANITIZE_STRICT=1 to also run the tests listed in KNOWN_FAILURES.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
BUILD_DIR=${BUILD_DIR:-build-asan}
BUILD_ONLY=0
if [ "${1:-}" = --build-only ]; then BUILD_ONLY=1; shift; fi
started=$SECONDS

# Tests with a known sanitizer finding in the test itself (not in src/), skipped until fixed so
# that the run stays useful; a ctest -E regex. Empty it when the test is fixed.
# (None at the moment: the one found, a payload literal read past its end in relay_test, is fixed.)
KNOWN_FAILURES=''
[ "${SANITIZE_STRICT:-0}" = 1 ] && KNOWN_FAILURES=

[ "${SKIP_DEPS:-0}" = 1 ] || scripts/deps.sh
missing=()
command -v clang++ >/dev/null 2>&1 || missing+=(clang)
[ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -n 1)" ] ||
  missing+=(libclang-rt-14-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "sanitize.sh needs: ${missing[*]} (scripts/deps.sh --ci installs them)" >&2
  exit 1
fi
configure_sanitizer_tree "$BUILD_DIR"
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}"
echo "sanitize: built in $((SECONDS - started)) s"
[ "$BUILD_ONLY" = 0 ] || exit 0
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
if clang -fsanitize=address "$probe/p.c" -o "$probe/p" 2>/dev/null &&
  ! ASAN_OPTIONS=detect_leaks=1 "$probe/p" 2>&1 | grep -q "LeakSanitizer has encountered a fatal error"; then
  echo "LeakSanitizer: on"
else
  echo "LeakSanitizer does not work here (ptrace restricted?): leaks are left to scripts/leakcheck.sh"
  export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
fi

status=0
cd "$BUILD_DIR"
exclude=()
if [ -n "$KNOWN_FAILURES" ]; then
  exclude+=(-E "$KNOWN_FAILURES")
  echo "skipped (known finding, see KNOWN_FAILURES in $0): $KNOWN_FAILURES"
fi
echo "== ctest -L 'unit|integration' (sanitized), ${TEST_JOBS:-$(($(nproc) * 2))} at a time"
if ! ctest -L 'unit|integration' -j "${TEST_JOBS:-$(($(nproc) * 2))}" --output-on-failure "${exclude[@]}" "$@"; then
  status=1
  echo "sanitized ctest: FAILED (see above; rerun single tests with ctest -R NAME -V)"
fi

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
