# Shared by the compose checks: queries on the resolved configuration in $cfg (the output of
# `docker-compose -f FILE config`: anchors merged, ${VAR:-default} substituted, services and
# their keys at fixed indents, environment as a KEY: value mapping), by service block (service,
# env_of, ...) or, after flatten_cfg, by dotted path (q, words, arg_after). Source it after
# checks.sh.

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

# --- the resolved configuration by path --------------------------------------------------------
# flatten_cfg: sets $flat from $cfg, one `PATH<TAB>VALUE` line per scalar, per list item and per
# mapping key (line breaks inside a value as \037). PATH is dotted (services.relay.environment.X;
# compose keys contain no dots). Reads YAML with docker-compose's own interpreter, which has
# python3-yaml (the `python3` first on PATH may not); returns 1 when there is none.
flatten_cfg() {
  local py='' candidate
  for candidate in "$(sed -n '1s/^#!//p' "$(command -v "$COMPOSE")" | awk '{print $1}')" /usr/bin/python3 python3; do
    [ -n "$candidate" ] && "$candidate" -c 'import yaml' 2>/dev/null && { py=$candidate; break; }
  done
  [ -n "$py" ] || return 1
  flat=$("$py" -c '
import sys, yaml
def enc(x): return str(x).replace("\n", "\037")
def walk(path, v):
    if isinstance(v, dict):
        for k, child in v.items():
            print(path + "\t" + enc(k))
            walk(path + "." + str(k) if path else str(k), child)
    elif isinstance(v, list):
        for item in v: print(path + "\t" + enc(item))
    elif v is not None:
        print(path + "\t" + enc(v))
walk("", yaml.safe_load(sys.stdin))
' <<<"$cfg")
}
# q PATH: a value of the flattened configuration: a scalar as is, a list one item a line, a
# mapping its keys; nothing when missing.
q() { awk -F'\t' -v p="$1" '$1 == p { sub(/^[^\t]*\t/, ""); print }' <<<"$flat" | tr '\037' '\n'; }
# words PATH: q PATH with the words of every line one a line (a command as a string or a list).
words() { q "$1" | tr -s ' \t' '\n' | sed '/^$/d'; }
# arg_after PATH FLAG: the word following FLAG in a command.
arg_after() { words "$1" | awk -v f="$2" 'prev == f { print; exit } { prev = $0 }'; }
