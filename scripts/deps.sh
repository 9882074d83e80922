#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build, test and run expiry-relay (idempotent).
# Without root it prints the apt-get command to run instead.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libhiredis-dev libevent-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libgtest-dev prometheus-cpp-dev
  redis-server redis-tools
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
echo "Installing: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The redis-server package may start a system instance; the project never uses it (its
# scripts and tests start their own servers on free ports).
