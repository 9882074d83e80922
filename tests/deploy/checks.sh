# Shared by the deploy checks: counters, check(), and the closing "N passed, N failed" line
# (which ctest and CI read). Source it; then call check DESCRIPTION COMMAND... and finish.
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1" >&2; }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# dockerfile_instructions FILE: the Dockerfile as logical instructions, one a line. Comment
# lines are dropped (also inside continuations, as Docker does) and lines ending in a backslash
# are joined.
dockerfile_instructions() {
  awk '
    /^[[:space:]]*#/ { next }
    { line = line $0 }
    /\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, " ", line); next }
    { if (line ~ /[^[:space:]]/) print line; line = "" }
    END { if (line ~ /[^[:space:]]/) print line }
  ' "$1"
}
