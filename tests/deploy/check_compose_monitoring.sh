#!/usr/bin/env bash
# shellcheck disable=SC2317  # check functions are called indirectly, through check()
# Deploy test: docker-compose.yml's optional monitoring profile. The default profile still starts
# only redis, relay-1/2, canceller-1/2, order-sim, api, webhook and order-webhook; prometheus and
# grafana exist only under the
# profile "monitoring", run the official images pinned by tag, and mount deploy/ read-only:
# prometheus.yml and the alerts.yml it loads at /etc/prometheus, Grafana's provisioning
# (datasource, dashboard provider) and the dashboard where the provider looks. Prometheus scrapes
# every compose service with a metrics endpoint (a *_METRICS_PORT, or expiry-api's listen port,
# where it serves /metrics) there, and nothing else; Grafana's datasource is that Prometheus.
#
# Needs docker-compose (Debian: apt-get install docker-compose); fails without it. No Docker
# engine is needed: `config` only parses, validates and resolves the file.
#
# Usage: tests/deploy/check_compose_monitoring.sh [COMPOSE_FILE]   (default: docker-compose.yml)
# Set COMPOSE to use another binary (default: docker-compose).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMPOSE_FILE=$(realpath "${1:-$ROOT/docker-compose.yml}")
COMPOSE=${COMPOSE:-docker-compose}
cd "$ROOT" || exit 1

DEFAULT_SERVICES="api canceller-1 canceller-2 order-sim order-webhook redis relay-1 relay-2 webhook"
MONITORING_SERVICES="grafana prometheus"

# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
# shellcheck source=tests/deploy/compose_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/compose_checks.sh"

if ! command -v "$COMPOSE" >/dev/null 2>&1; then
  fail "$COMPOSE not found (CI installs it: apt-get install -y docker-compose)"
  finish
fi
if "$COMPOSE" -f "$COMPOSE_FILE" --profile monitoring config -q; then
  pass "$COMPOSE -f $(basename "$COMPOSE_FILE") --profile monitoring config -q"
else
  fail "$COMPOSE -f $(basename "$COMPOSE_FILE") --profile monitoring config -q"
  finish
fi
if ! cfg=$("$COMPOSE" -f "$COMPOSE_FILE" config 2>/dev/null) || ! flatten_cfg; then
  fail "$COMPOSE config failed, or no Python with yaml to read it"
  finish
fi
compose_flat=$flat

# yaml_flat FILE: the flattened form of any YAML file (see flatten_cfg), into $flat.
yaml_flat() { cfg=$(cat "$1") && flatten_cfg; }
compose() { flat=$compose_flat; q "$1"; }
sorted() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort | paste -sd' '; }

# --- profiles ----------------------------------------------------------------------------------
# A service with `profiles` starts only when one of them is active; one without always starts.
all_services=$(compose services | sort | paste -sd' ')
unprofiled=$(for s in $all_services; do [ -n "$(compose "services.$s.profiles")" ] || echo "$s"; done | paste -sd' ')
check "the default profile starts only the demo services ($unprofiled)" test "$unprofiled" = "$(sorted "$DEFAULT_SERVICES")"
for s in $MONITORING_SERVICES; do
  check "service $s exists" grep -qw "$s" <<<"$all_services"
  check "$s is only in the profile monitoring" test "$(compose "services.$s.profiles" | paste -sd' ')" = monitoring
done
check "prometheus runs the official prom/prometheus image pinned by tag" \
  grep -qE '^prom/prometheus:v[0-9]+\.[0-9]+\.[0-9]+$' <<<"$(compose services.prometheus.image)"
check "grafana runs the official grafana/grafana image pinned by tag" \
  grep -qE '^grafana/grafana:[0-9]+\.[0-9]+\.[0-9]+$' <<<"$(compose services.grafana.image)"

# mounts SERVICE: its bind mounts as SOURCE:TARGET:MODE lines (sources absolute, as resolved).
mounts() { compose "services.$1.volumes"; }
mounted_ro() { # mounted_ro SERVICE REPO_PATH TARGET
  mounts "$1" | grep -qxF "$ROOT/$2:$3:ro"
}

# --- prometheus --------------------------------------------------------------------------------
check "prometheus mounts deploy/prometheus/prometheus.yml read-only at /etc/prometheus/prometheus.yml" \
  mounted_ro prometheus deploy/prometheus/prometheus.yml /etc/prometheus/prometheus.yml
yaml_flat deploy/prometheus/prometheus.yml
rule_files=$(q rule_files)
check "prometheus.yml loads rule files" test -n "$rule_files"
for f in $rule_files; do
  case "$f" in /*) target=$f ;; *) target=/etc/prometheus/$f ;; esac
  check "prometheus mounts deploy/prometheus/$(basename "$f") read-only at $target (rule_files: $f)" \
    mounted_ro prometheus "deploy/prometheus/$(basename "$f")" "$target"
done
# metrics_port SERVICE: the port its /metrics is served on: its *_METRICS_PORT, else the port of
# expiry-api's EXPIRY_API_LISTEN (the API serves /metrics beside its routes); empty for none.
metrics_port() {
  local flat=$compose_flat var
  var=$(q "services.$1.environment" | grep -E '_METRICS_PORT$' | head -n 1)
  if [ -n "$var" ]; then
    q "services.$1.environment.$var"
  elif [ "$(q "services.$1.entrypoint" | head -n 1)" = expiry-api ]; then
    q "services.$1.environment.EXPIRY_API_LISTEN" | sed -n -E 's/^.*:([0-9]+)$/\1/p'
  fi
}
# Scrape targets: flatten_cfg lists a list of mappings as items, so read them with grep.
targets=$(grep -oE '"[a-z0-9.-]+:[0-9]+"' deploy/prometheus/prometheus.yml | tr -d '"')
check "prometheus.yml scrapes targets" test -n "$targets"
for t in $targets; do
  host=${t%%:*} port=${t##*:}
  mp=$(metrics_port "$host")
  check "scrape target $t is a compose service's metrics port (${mp:-none})" test -n "$mp" -a "$mp" = "$port"
done
for s in $DEFAULT_SERVICES; do
  mp=$(metrics_port "$s")
  [ -n "$mp" ] || continue
  check "prometheus scrapes $s ($s:$mp)" grep -qxF "$s:$mp" <<<"$targets"
done
# Each program's job name is the one alerts.yml and the dashboard select on (job="...").
jobs=$(sed -n -E 's/^ *- job_name: *//p' deploy/prometheus/prometheus.yml)
for j in expiry-relay order-canceller expiry-api expiry-webhook; do
  check "prometheus.yml has the job $j" grep -qxF "$j" <<<"$jobs"
done
check "prometheus.yml's job names are distinct" test -z "$(sort <<<"$jobs" | uniq -d)"

# --- grafana -----------------------------------------------------------------------------------
check "grafana mounts the datasource provisioning read-only" \
  mounted_ro grafana deploy/grafana/provisioning/datasources /etc/grafana/provisioning/datasources
check "grafana mounts the dashboard provisioning read-only" \
  mounted_ro grafana deploy/grafana/provisioning/dashboards /etc/grafana/provisioning/dashboards
ds=$(grep -A20 -- '- name:' deploy/grafana/provisioning/datasources/prometheus.yml)
check "the provisioned datasource is the compose prometheus (http://prometheus:9090)" \
  grep -qE '^ +url: http://prometheus:9090$' <<<"$ds"
ds_uid=$(sed -n -E 's/^ +uid: *//p' <<<"$ds" | head -n 1)
dash_ds=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(*[v["current"]["value"] for v in d["templating"]["list"] if v["type"] == "datasource"])' deploy/grafana/expiry-relay.json)
check "the dashboard's datasource variable defaults to the provisioned uid ($ds_uid)" test -n "$ds_uid" -a "$dash_ds" = "$ds_uid"
provider_path=$(sed -n -E 's/^ +path: *//p' deploy/grafana/provisioning/dashboards/expiry-relay.yml | head -n 1)
check "grafana mounts deploy/grafana/expiry-relay.json read-only where the provider looks ($provider_path)" \
  mounted_ro grafana deploy/grafana/expiry-relay.json "$provider_path/expiry-relay.json"
check "the dashboard is valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' deploy/grafana/expiry-relay.json

finish
