#!/usr/bin/env bash
# Deploy test: the Dockerfile's build packages must equal scripts/deps.sh's PACKAGES minus
# redis-server and redis-tools (the image needs no Redis), and the runtime stage must run as
# a non-root USER, have a HEALTHCHECK, and install no build-only packages.
#
# Usage: tests/deploy/check_dockerfile_packages.sh [DOCKERFILE [DEPS_SH]]
#   (defaults: the repository's Dockerfile and scripts/deps.sh)
# Exit status 0 only if every check passes; mismatches are diffed on stderr.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DOCKERFILE=${1:-$ROOT/Dockerfile}
DEPS=${2:-$ROOT/scripts/deps.sh}
# Packages in deps.sh that the image deliberately leaves out.
NOT_IN_IMAGE=(redis-server redis-tools)

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

for f in "$DOCKERFILE" "$DEPS"; do
  if [ ! -r "$f" ]; then
    fail "cannot read $f"
    finish
  fi
done

# --- the Dockerfile as logical instructions -----------------------------------------------
instructions=$(dockerfile_instructions "$DOCKERFILE")

# The final stage: the instructions after the last FROM.
last_from=$(grep -niE '^[[:space:]]*FROM[[:space:]]' <<<"$instructions" | tail -n 1 | cut -d: -f1)
if [ -z "$last_from" ]; then
  fail "$DOCKERFILE has no FROM instruction"
  finish
fi
final_stage=$(tail -n +"$last_from" <<<"$instructions")

# Splits words (one per line), drops empties, sorts, dedups.
words() { tr -s ' \t' '\n' | sed '/^$/d' | LC_ALL=C sort -u; }

# --- check: BUILD_PACKAGES == deps.sh PACKAGES - redis-server - redis-tools -----------------
deps_list=$(awk '
  { sub(/#.*/, "") }
  !inside && /^[[:space:]]*PACKAGES=\(/ { inside = 1; sub(/^[[:space:]]*PACKAGES=\(/, "") }
  inside {
    if (index($0, ")")) { sub(/\).*/, ""); print; exit }
    print
  }
' "$DEPS" | words)

arg_lines=$(grep -E '^[[:space:]]*ARG[[:space:]]+BUILD_PACKAGES=' <<<"$instructions")
arg_count=$(grep -c . <<<"$arg_lines")
docker_list=$(sed -E 's/^[[:space:]]*ARG[[:space:]]+BUILD_PACKAGES=//; s/^"(.*)"[[:space:]]*$/\1/; '"s/^'(.*)'[[:space:]]*\$/\\1/" <<<"$arg_lines" | words)

if [ -z "$deps_list" ]; then
  fail "no PACKAGES=( ... ) list found in $DEPS"
elif [ -z "$arg_lines" ]; then
  fail "no ARG BUILD_PACKAGES=\"...\" found in $DOCKERFILE"
elif [ "$arg_count" -ne 1 ]; then
  fail "$DOCKERFILE defines ARG BUILD_PACKAGES $arg_count times; keep exactly one"
else
  missing_exclusions=()
  for p in "${NOT_IN_IMAGE[@]}"; do
    grep -qxF "$p" <<<"$deps_list" || missing_exclusions+=("$p")
  done
  expected=$(grep -vxF -f <(printf '%s\n' "${NOT_IN_IMAGE[@]}") <<<"$deps_list")
  if [ "$expected" = "$docker_list" ]; then
    pass "Dockerfile BUILD_PACKAGES equals scripts/deps.sh minus ${NOT_IN_IMAGE[*]} ($(grep -c . <<<"$expected") packages)"
  else
    fail "Dockerfile BUILD_PACKAGES differs from scripts/deps.sh minus ${NOT_IN_IMAGE[*]}"
    diff -u --label "scripts/deps.sh minus ${NOT_IN_IMAGE[*]}" --label "Dockerfile ARG BUILD_PACKAGES" \
      <(printf '%s\n' "$expected") <(printf '%s\n' "$docker_list") >&2
  fi
  if [ ${#missing_exclusions[@]} -gt 0 ]; then
    echo "note: scripts/deps.sh no longer lists ${missing_exclusions[*]}; update NOT_IN_IMAGE in $0" >&2
  fi
fi

# --- check: the build stage installs exactly that list ---------------------------------------
if grep -E '^[[:space:]]*RUN[[:space:]]' <<<"$instructions" |
   grep -E 'apt-get([[:space:]]+[^[:space:]]+)*[[:space:]]+install' |
   grep -E -- '--no-install-recommends' |
   grep -qE '\$\{?BUILD_PACKAGES\}?'; then
  pass "a RUN installs \$BUILD_PACKAGES with apt-get install --no-install-recommends"
else
  fail "no RUN apt-get install --no-install-recommends \${BUILD_PACKAGES} in $DOCKERFILE"
fi

# --- check: runtime stage base ---------------------------------------------------------------
final_from=$(head -n 1 <<<"$final_stage")
if grep -qE '^[[:space:]]*FROM[[:space:]]+(--platform=[^[:space:]]+[[:space:]]+)?debian:12-slim([@[:space:]]|$)' <<<"$final_from"; then
  pass "runtime stage is FROM debian:12-slim"
else
  fail "runtime stage is not FROM debian:12-slim: $final_from"
fi

# --- check: runtime stage installs no build-only packages ------------------------------------
build_only=$(grep -E '^[[:space:]]*(RUN|ARG|ENV)[[:space:]]' <<<"$final_stage" | tr -d "\"'" | words |
  grep -E '^(build-essential|cmake|pkg-config|g\+\+|gcc|[A-Za-z0-9.+-]+-dev)$' || true)
if [ -z "$build_only" ]; then
  pass "runtime stage installs no compilers or -dev packages"
else
  fail "runtime stage mentions build-only packages: $(tr '\n' ' ' <<<"$build_only")"
fi

# --- check: non-root USER in the runtime stage ----------------------------------------------
user=$(grep -iE '^[[:space:]]*USER[[:space:]]' <<<"$final_stage" | tail -n 1 | awk '{print $2}')
user_name=${user%%:*}
if [ -z "$user" ]; then
  fail "runtime stage has no USER instruction (it would run as root)"
elif [ "$user_name" = root ] || [ "$user_name" = 0 ]; then
  fail "runtime stage runs as root (USER $user)"
else
  pass "runtime stage runs as non-root USER $user"
fi

# --- check: HEALTHCHECK in the runtime stage -------------------------------------------------
health=$(grep -iE '^[[:space:]]*HEALTHCHECK[[:space:]]' <<<"$final_stage" | tail -n 1)
if [ -z "$health" ]; then
  fail "runtime stage has no HEALTHCHECK"
elif grep -qiE '^[[:space:]]*HEALTHCHECK[[:space:]]+NONE[[:space:]]*$' <<<"$health"; then
  fail "runtime stage disables its HEALTHCHECK (HEALTHCHECK NONE)"
elif ! grep -qE '[[:space:]]CMD[[:space:]]' <<<"$health"; then
  fail "HEALTHCHECK has no CMD: $health"
else
  pass "runtime stage has a HEALTHCHECK"
fi

finish
