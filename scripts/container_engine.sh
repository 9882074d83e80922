# Sourced by scripts/compose.sh: a container engine on this machine, and the public base images
# that no registry here can serve, made from Debian's own packages.
#
# ensure_engine: installs Debian's docker.io, docker-compose and mmdebstrap when missing (root
#   only), and starts dockerd when no daemon answers (there is no systemd here). A daemon this
#   function started is stopped again by stop_engine; one that was already running is left alone.
#   CONTAINERS_CPU_SHARES=N (CI sets 2) starts it with every container at that CPU weight.
# ensure_base_images: tags, from Debian's packages, each image the Dockerfile and the compose files
#   name that the engine does not have yet: debian:13-slim (trixie, minbase, without documentation,
#   man pages or translations, as Debian's official slim image), tagged debian:13 too, and
#   redis:7.0 (bookworm's redis-server 7.0.15). An image that is already there, pulled from a registry or made
#   before, is used as it is. The archive's address is this machine's own (scripts/apt_archive.sh).

# shellcheck source=scripts/apt_archive.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_archive.sh"

ENGINE_PACKAGES=(docker.io docker-compose mmdebstrap)
DOCKER=${DOCKER:-docker}
DOCKERD_PID=
DOCKERD_LOG=${DOCKERD_LOG:-/tmp/expiry-dockerd.log}

ensure_engine() {
  local missing=() p
  for p in "${ENGINE_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "containers: missing packages; run: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
      return 1
    fi
    echo "containers: installing ${missing[*]} ..."
    apt-get update -qq || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  "$DOCKER" info >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "containers: no Docker daemon answers, and only root can start one here" >&2
    return 1
  fi
  local dockerd_args=()
  if [ -n "${CONTAINERS_CPU_SHARES:-}" ]; then
    # Every container (a build's RUN steps too) under one cgroup of this CPU weight (cgroup v1
    # cpu.shares; a process group's weight is 1024): they get the CPU the host leaves idle.
    if mkdir -p /sys/fs/cgroup/cpu/expiry-containers 2>/dev/null &&
       echo "$CONTAINERS_CPU_SHARES" >/sys/fs/cgroup/cpu/expiry-containers/cpu.shares 2>/dev/null; then
      dockerd_args+=(--cgroup-parent /expiry-containers)
      echo "containers: at CPU weight $CONTAINERS_CPU_SHARES (cgroup /expiry-containers)"
    else
      echo "containers: no cgroup v1 cpu controller to lower their CPU weight; they run at the default" >&2
    fi
  fi
  echo "containers: starting dockerd (log $DOCKERD_LOG) ..."
  setsid dockerd "${dockerd_args[@]}" >"$DOCKERD_LOG" 2>&1 </dev/null &
  DOCKERD_PID=$!
  local deadline=$((SECONDS + 60))
  until "$DOCKER" info >/dev/null 2>&1; do
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      echo "containers: dockerd did not come up within 60 s; its log:" >&2
      tail -n 20 "$DOCKERD_LOG" >&2
      return 1
    fi
    sleep 0.5
  done
}

# set_containers_cpu_shares N: the CPU weight of every container of a daemon that ensure_engine
# started with CONTAINERS_CPU_SHARES (no-op otherwise): CI raises it back to the default, 1024,
# once the image is built, so that the deployment's own timing is measured at a normal weight.
set_containers_cpu_shares() {
  local file=/sys/fs/cgroup/cpu/expiry-containers/cpu.shares
  [ -w "$file" ] || return 0
  echo "$1" >"$file" && echo "containers: at CPU weight $1"
}

# stop_engine: stops the dockerd that ensure_engine started (SIGTERM; it stops its containers).
stop_engine() {
  [ -n "$DOCKERD_PID" ] || return 0
  kill -TERM "$DOCKERD_PID" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$DOCKERD_PID" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  kill -KILL "$DOCKERD_PID" 2>/dev/null || true
  DOCKERD_PID=
}

# make_base_image NAME SUITE [mmdebstrap and docker-import options as: --mm OPT... --import OPT...]
make_base_image() {
  local name=$1 suite=$2 archive mm=() imp=() to=mm started=$SECONDS
  shift 2
  for a in "$@"; do
    case $a in
      --mm) to=mm ;;
      --import) to=imp ;;
      *) if [ "$to" = mm ]; then mm+=("$a"); else imp+=("$a"); fi ;;
    esac
  done
  archive=$(debian_archive_uri) || return 1
  # A machine whose archive is a dated snapshot turns off apt's Valid-Until check; the image's apt
  # must then do the same to read it.
  if apt-config dump 2>/dev/null | grep -q '^Acquire::Check-Valid-Until "false";'; then
    mm+=(--aptopt='Acquire::Check-Valid-Until "false"')
  fi
  echo "containers: making $name from Debian $suite (mmdebstrap --variant=minbase) ..."
  mmdebstrap --quiet --variant=minbase "${mm[@]}" "$suite" - "deb $archive $suite main" |
    "$DOCKER" import "${imp[@]}" - "$name" >/dev/null || { echo "containers: making $name failed" >&2; return 1; }
  echo "containers: $name made in $((SECONDS - started)) s"
}

# The dpkg excludes of Debian's official slim images: no documentation but the copyrights, no man
# pages, info pages or translations. They stay in the image's dpkg configuration, so the packages
# a Dockerfile installs on it are slim too.
SLIM_DPKG_OPTS=(
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*'
)

# has_image NAME: the engine has image NAME.
has_image() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

ensure_base_images() {
  local pid= rc=0
  if ! has_image redis:7.0; then
    make_base_image redis:7.0 bookworm --mm --include=redis-server,redis-tools "${SLIM_DPKG_OPTS[@]}" \
      --import --change 'WORKDIR /data' &
    pid=$!
  fi
  # One trixie base serves as both: the build stage's debian:13 needs nothing the slim one lacks.
  if ! has_image debian:13-slim; then
    make_base_image debian:13-slim trixie --mm "${SLIM_DPKG_OPTS[@]}" || rc=1
  fi
  if [ "$rc" = 0 ] && ! has_image debian:13; then
    "$DOCKER" tag debian:13-slim debian:13 || rc=1
  fi
  [ -z "$pid" ] || wait "$pid" || rc=1
  return "$rc"
}
