#!/usr/bin/env bash
# Configures and builds into ./build (or $BUILD_DIR). Extra arguments go to cmake's configure.
# Env: BUILD_DIR (build), BUILD_TYPE (RelWithDebInfo), JOBS (nproc),
#      BUILD_TARGETS: the targets to build, space-separated (default: all of them);
#      BUILD_PROGRESS=1: print one short line per compiled file, with the percentage done,
#      instead of the compiler's whole output (the demo's first run uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
if [ "${BUILD_PROGRESS:-0}" != 1 ]; then
  cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${targets[@]}"
  exit 0
fi
log=$BUILD_DIR/build.log
started=$SECONDS
# "[ 42%] Building CXX object src/relay/CMakeFiles/expiry_relay_service.dir/sweeper.cpp.o"
# becomes "  build [ 42%] src/relay/sweeper.cpp"; the full output goes to build.log.
if ! cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${targets[@]}" 2>&1 | tee "$log" |
  sed -u -n -E 's#^\[ *([0-9]+)%\] Building CXX object (.*)/CMakeFiles/[^/]+\.dir/(.*)\.o$#  build [\1%] \2/\3#p;
                s#^\[ *([0-9]+)%\] Linking CXX executable (.*)$#  build [\1%] linking \2#p'; then
  tail -n 40 "$log" >&2
  echo "build failed (full output: $log)" >&2
  exit 1
fi
echo "  built in $((SECONDS - started)) s" >&2
