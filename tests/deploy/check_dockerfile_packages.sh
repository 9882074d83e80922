#!/usr/bin/env bash
# Deploy test: the Dockerfile's build packages must equal scripts/deps.sh's PACKAGES minus
# redis-server and redis-tools (the image needs no Redis) plus its HIREDIS_PACKAGE (the image is
# Debian 13, where deps.sh adds the system's hiredis instead of building it from source). The
# build stage must be FROM debian:13 and the runtime stage FROM debian:13-slim; the runtime stage
# must run as a non-root USER, have a HEALTHCHECK, install ca-certificates (the default CA store
# of rediss://) and tzdata (the time zones of src/recur) and no build-only packages.
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

# --- check: BUILD_PACKAGES == deps.sh PACKAGES - redis-server - redis-tools + HIREDIS_PACKAGE --
# deps.sh's first PACKAGES=( ... ) list (possibly over several lines); later PACKAGES+=(...)
# lines are deps.sh's per-system additions and are not read.
deps_list=$(awk '
  { sub(/#.*/, "") }
  !inside && /^[[:space:]]*PACKAGES=\(/ { inside = 1; sub(/^[[:space:]]*PACKAGES=\(/, "") }
  inside {
    if (index($0, ")")) { sub(/\).*/, ""); print; exit }
    print
  }
' "$DEPS" | words)
# deps.sh's HIREDIS_PACKAGE=NAME (quotes removed); exactly one assignment.
hiredis_lines=$(sed -E 's/#.*//' "$DEPS" | grep -E '^[[:space:]]*HIREDIS_PACKAGE=')
hiredis_package=$(sed -E 's/^[[:space:]]*HIREDIS_PACKAGE=//' <<<"$hiredis_lines" | tr -d "\"'" | words)

arg_lines=$(grep -E '^[[:space:]]*ARG[[:space:]]+BUILD_PACKAGES=' <<<"$instructions")
arg_count=$(grep -c . <<<"$arg_lines")
docker_list=$(sed -E 's/^[[:space:]]*ARG[[:space:]]+BUILD_PACKAGES=//; s/^"(.*)"[[:space:]]*$/\1/; '"s/^'(.*)'[[:space:]]*\$/\\1/" <<<"$arg_lines" | words)

if [ -z "$deps_list" ]; then
  fail "no PACKAGES=( ... ) list found in $DEPS"
elif [ -z "$hiredis_package" ]; then
  fail "no HIREDIS_PACKAGE=NAME found in $DEPS (the hiredis >= 1.1 package the Debian 13 image installs)"
elif [ "$(grep -c . <<<"$hiredis_lines")" -ne 1 ] || [ "$(grep -c . <<<"$hiredis_package")" -ne 1 ]; then
  fail "$DEPS must assign HIREDIS_PACKAGE exactly once, to one package: $(tr '\n' ' ' <<<"$hiredis_lines")"
elif [ -z "$arg_lines" ]; then
  fail "no ARG BUILD_PACKAGES=\"...\" found in $DOCKERFILE"
elif [ "$arg_count" -ne 1 ]; then
  fail "$DOCKERFILE defines ARG BUILD_PACKAGES $arg_count times; keep exactly one"
else
  missing_exclusions=()
  for p in "${NOT_IN_IMAGE[@]}"; do
    grep -qxF "$p" <<<"$deps_list" || missing_exclusions+=("$p")
  done
  expected=$({ grep -vxF -f <(printf '%s\n' "${NOT_IN_IMAGE[@]}") <<<"$deps_list"; echo "$hiredis_package"; } | words)
  what="scripts/deps.sh PACKAGES minus ${NOT_IN_IMAGE[*]} plus HIREDIS_PACKAGE ($hiredis_package)"
  if [ "$expected" = "$docker_list" ]; then
    pass "Dockerfile BUILD_PACKAGES equals $what: $(grep -c . <<<"$expected") packages"
  else
    fail "Dockerfile BUILD_PACKAGES differs from $what"
    diff -u --label "$what" --label "Dockerfile ARG BUILD_PACKAGES" \
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

# --- check: the stages' bases: Debian 13, whose libhiredis-dev is hiredis >= 1.1 with TLS -----
# from_is LINE IMAGE: the FROM instruction LINE names IMAGE (a tag, optionally @digest).
from_is() { grep -qE '^[[:space:]]*FROM[[:space:]]+(--platform=[^[:space:]]+[[:space:]]+)?'"$2"'([@[:space:]]|$)' <<<"$1"; }
first_from=$(grep -iE '^[[:space:]]*FROM[[:space:]]' <<<"$instructions" | head -n 1)
if from_is "$first_from" 'debian:13'; then
  pass "build stage is FROM debian:13"
else
  fail "build stage is not FROM debian:13: $first_from"
fi
final_from=$(head -n 1 <<<"$final_stage")
if from_is "$final_from" 'debian:13-slim'; then
  pass "runtime stage is FROM debian:13-slim"
else
  fail "runtime stage is not FROM debian:13-slim: $final_from"
fi

# --- check: runtime stage installs no build-only packages ------------------------------------
build_only=$(grep -E '^[[:space:]]*(RUN|ARG|ENV)[[:space:]]' <<<"$final_stage" | tr -d "\"'" | words |
  grep -E '^(build-essential|cmake|pkg-config|g\+\+|gcc|[A-Za-z0-9.+-]+-dev)$' || true)
if [ -z "$build_only" ]; then
  pass "runtime stage installs no compilers or -dev packages"
else
  fail "runtime stage mentions build-only packages: $(tr '\n' ' ' <<<"$build_only")"
fi

# --- check: the runtime stage has a default CA store -------------------------------------------
# rediss:// without --tls-ca-cert-file/--tls-ca-cert-dir verifies against the system's CA store,
# which debian:13-slim lacks.
if grep -E '^[[:space:]]*ARG[[:space:]]+RUNTIME_PACKAGES=' <<<"$final_stage" | tr -d "\"'=" | words |
   grep -qxF ca-certificates; then
  pass "runtime stage installs ca-certificates (the default CA store for rediss://)"
else
  fail "runtime stage's RUNTIME_PACKAGES lacks ca-certificates (the default CA store for rediss://)"
fi

# --- check: the runtime stage has the time zones ----------------------------------------------
# libdate-tz (src/recur) reads /usr/share/zoneinfo at run time: a data package, whose absence the
# image's ldd check cannot see.
if grep -E '^[[:space:]]*ARG[[:space:]]+RUNTIME_PACKAGES=' <<<"$final_stage" | tr -d "\"'=" | words |
   grep -qxF tzdata; then
  pass "runtime stage installs tzdata (the time zones libdate-tz reads)"
else
  fail "runtime stage's RUNTIME_PACKAGES lacks tzdata (the time zones libdate-tz reads)"
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
