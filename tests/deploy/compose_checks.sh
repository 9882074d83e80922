# Shared by the compose checks: queries on the resolved configuration in $cfg (the output of
# `docker-compose -f FILE config`: anchors merged, ${VAR:-default} substituted, services and
# their keys at fixed indents, environment as a KEY: value mapping). Source it after checks.sh.

# The resolved block of one service (its lines below `  NAME:`).
service() {
  awk -v s="$1" '
    /^[^[:space:]]/ { in_services = ($0 == "services:"); in_block = 0; next }
    in_services && /^  [^[:space:]]/ { in_block = ($0 == "  " s ":"); next }
    in_services && in_block { print }
  ' <<<"$cfg"
}
# The value of one environment variable of a service, quotes removed (empty if unset).
env_of() {
  service "$1" | sed -n -E "s/^[[:space:]]+$2:[[:space:]]*//p" | head -n 1 | sed -E "s/^'(.*)'\$/\\1/; s/^\"(.*)\"\$/\\1/"
}
# Whether a service's block matches an extended regex.
has() { service "$1" | grep -qE -- "$2"; }
env_is() { [ "$(env_of "$1" "$2")" = "$3" ]; }
env_set() { [ -n "$(env_of "$1" "$2")" ]; }
# The entrypoint (list or string form) is exactly PROGRAM.
entrypoint_is() {
  service "$1" | awk '
    /^    entrypoint:/ { sub(/^    entrypoint:[[:space:]]*/, ""); if ($0 != "") print; on = 1; next }
    on && /^    - / { sub(/^    - /, ""); print; next }
    { on = 0 }
  ' | tr -d "\"'" | paste -sd' ' | grep -qxF "$2"
}
