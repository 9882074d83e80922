#!/usr/bin/env bash
# Installs the Debian packages needed to build, test and run expiry-relay (idempotent), and
# hiredis >= 1.1 with TLS: the system's libhiredis-dev where it is that new (Debian 13), else
# (Debian 12, whose hiredis is 0.14) scripts/hiredis.sh builds Debian 13's own source package
# into a private prefix in the build tree, once. Without root it prints the apt-get command.
# Usage: scripts/deps.sh [--ci | --demo]
#   --demo: only what the demo needs (no browser for the console's tests).
#   --ci: also what only CI's other stages use: valgrind (leak check), clang with its sanitizer
#   and libFuzzer runtimes (scripts/sanitize.sh), docker-compose (the deploy checks validate the
#   compose files; no engine), golang-go (the Go snippet of docs/webhooks.md is run), wrk (the HTTP
#   API's bench, scripts/bench_api.sh). promtool
#   is fetched by the deploy check that runs it.
# Env: BUILD_DIR (default build), where hiredis goes: $BUILD_DIR/_deps/hiredis-1.2.0.
set -euo pipefail
cd "$(dirname "$0")/.."
CI=0
DEMO=0
case "${1:-}" in
  "") ;;
  --ci) CI=1 ;;
  --demo) DEMO=1 ;;
  *) echo "usage: $0 [--ci | --demo]" >&2; exit 2 ;;
esac

PACKAGES=(
  build-essential cmake pkg-config
  libssl-dev libevent-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libgtest-dev prometheus-cpp-dev
  libcurl4-openssl-dev
  libhowardhinnant-date-dev tzdata
  redis-server redis-tools
)
# The browser tests of the web console (tests/browser, ctest -L browser): headless Chromium driven
# through its WebDriver by Debian's python3 with Selenium. Kept apart from PACKAGES, whose list the
# Dockerfile's build stage repeats: the image needs no browser.
BROWSER_TEST_PACKAGES=(chromium chromium-driver python3-selenium)
[ "$DEMO" = 1 ] || PACKAGES+=("${BROWSER_TEST_PACKAGES[@]}")
# hiredis on a system that packages 1.1 or newer (Debian 13; the Dockerfile's build stage).
HIREDIS_PACKAGE=libhiredis-dev
# What fetching and unpacking Debian 13's source packages needs (apt-get source, dpkg-source):
# hiredis on Debian 12 (scripts/hiredis.sh) and, on every system, the server matrix's Valkey and
# Redis (scripts/servers.sh).
SOURCE_TOOLS=(dpkg-dev xz-utils ca-certificates)
PACKAGES+=("${SOURCE_TOOLS[@]}")
# CI only (--ci): --no-install-recommends keeps docker.io out of docker-compose.
CI_PACKAGES=(valgrind clang libclang-rt-14-dev docker-compose golang-go wrk)
[ "$CI" = 0 ] || PACKAGES+=("${CI_PACKAGES[@]}")

debian_major=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_ID%%.*}") || true)
hiredis_candidate=$(apt-cache policy "$HIREDIS_PACKAGE" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
if [ "${debian_major:-0}" -ge 13 ] 2>/dev/null ||
   { [ -n "$hiredis_candidate" ] && dpkg --compare-versions "$hiredis_candidate" ge 1.1; }; then
  PACKAGES+=("$HIREDIS_PACKAGE")
  BUILD_HIREDIS=0
else
  BUILD_HIREDIS=1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: the deploy check of docs/openapi.json installs its validator with it (and the bench its
# BullMQ peer). A Node.js that ships its own npm (NodeSource's nodejs) counts; else Debian's npm.
command -v npm >/dev/null 2>&1 || missing+=(npm)
install_missing() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      SUDO=sudo
    else
      echo "Missing packages: ${missing[*]}" >&2
      echo "Run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  else
    SUDO=
  fi
  local started=$SECONDS
  echo "deps: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
  echo "deps: apt-get update ..." >&2
  $SUDO apt-get update -qq
  echo "deps: apt-get install (downloads, then unpacks; about a minute on a fresh machine) ..." >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "deps: ${#missing[@]} packages installed in $((SECONDS - started)) s" >&2
  # The redis-server package may start a system instance; the project never uses it (its
  # scripts and tests start their own servers on free ports).
}
[ ${#missing[@]} -eq 0 ] || install_missing
[ "$BUILD_HIREDIS" = 0 ] || scripts/hiredis.sh
