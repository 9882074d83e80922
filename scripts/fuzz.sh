#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) in the sanitizer tree, build-asan (clang with
# ASan+UBSan; scripts/lib.sh configure_sanitizer_tree, shared with scripts/sanitize.sh), and runs
# each for SECONDS_PER_TARGET seconds on a scratch copy of its committed seed corpus (the
# committed corpus never grows here), with its dictionary. Prints one line per target and exits
# non-zero if any target crashed, leaked, timed out or broke an invariant; the input that did is
# kept in build-asan/fuzz-artifacts/<target>/ (reproduce: build-asan/tests/fuzz/fuzz_<target> FILE).
# Usage: scripts/fuzz.sh [seconds_per_target (20)] [target ...]
# Env: BUILD_DIR (build-asan), JOBS (nproc: build jobs; each target fuzzes in one process), SKIP_DEPS=1.
# Needs clang and libclang-rt-14-dev (Debian 12: libFuzzer and the sanitizer runtimes).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-20}
shift || true
source scripts/lib.sh
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
ALL_TARGETS=(redis_url keyevent config_json bulk_line stream_entry)
TARGETS=("${ALL_TARGETS[@]}")
[ $# -gt 0 ] && TARGETS=("$@")
started=$SECONDS

missing=()
command -v clang++ >/dev/null 2>&1 || missing+=(clang)
[ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -n 1)" ] ||
  missing+=(libclang-rt-14-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh needs: ${missing[*]} (apt-get install -y --no-install-recommends ${missing[*]})" >&2
  exit 1
fi
[ "${SKIP_DEPS:-0}" = 1 ] || scripts/deps.sh

mkdir -p "$BUILD_DIR"
build_log=$BUILD_DIR/fuzz-build.log
if ! { configure_sanitizer_tree "$BUILD_DIR" && cmake --build "$BUILD_DIR" -j "$JOBS" --target fuzzers; } \
  >"$build_log" 2>&1; then
  tail -n 40 "$build_log"
  echo "fuzz.sh: build failed (full log: $build_log)" >&2
  exit 1
fi
built=$SECONDS

work=$(cd "$BUILD_DIR" && pwd)/fuzz-work
artifacts=$(cd "$BUILD_DIR" && pwd)/fuzz-artifacts
rm -rf "$work"
mkdir -p "$work" "$artifacts"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

status=0
summary=()
for t in "${TARGETS[@]}"; do
  bin=$BUILD_DIR/tests/fuzz/fuzz_$t
  [ -x "$bin" ] || { echo "no such fuzz target: $t" >&2; exit 2; }
  corpus=$work/$t
  mkdir -p "$corpus" "$artifacts/$t"
  cp tests/fuzz/corpus/"$t"/* "$corpus"/
  seeds=$(find "$corpus" -type f | wc -l)
  dict=()
  [ -f "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
  log=$work/$t.log
  rc=0
  "$bin" "$corpus" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$artifacts/$t/" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
  grown=$(find "$corpus" -type f | wc -l)
  line=$(printf '%-13s %s  execs=%s (%s/s)  %s  corpus %d->%d' "$t" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
    "${execs:-?}" "${rate:-?}" "${cov:-cov: ?}" "$seeds" "$grown")
  echo "$line"
  summary+=("$line")
  if [ $rc -ne 0 ]; then
    status=1
    echo "--- fuzz_$t failed (exit $rc); last lines of $log:"
    grep -vE '^#[0-9]+' "$log" | tail -n 40
    echo "--- crash inputs: $(ls "$artifacts/$t" 2>/dev/null | tr '\n' ' ')"
  fi
done

echo "== fuzz summary (${SECONDS_PER_TARGET} s per target; build $((built - started)) s, total $((SECONDS - started)) s)"
printf '%s\n' "${summary[@]}"
exit $status
