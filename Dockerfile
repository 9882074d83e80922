# expiry-relay container image: one image, four programs.
#
#   expiry-relay      the relay (default ENTRYPOINT)
#   order-canceller   the demo consumer-group worker      (--entrypoint order-canceller)
#   order-sim         the demo order generator            (--entrypoint order-sim)
#   expiry-ctl        the operator CLI, e.g. `expiry-ctl stats` (--entrypoint expiry-ctl)
#
# All configuration is through environment variables (EXPIRY_RELAY_*, ORDER_CANCELLER_*,
# ORDER_SIM_*); see docker-compose.yml for a complete setup with Redis.
#
#   docker build -t expiry-relay:local .
#
# Tested by tests/deploy/check_dockerfile_packages.sh and check_dockerfile_build.sh
# (ctest -L deploy).

############################################################################################
# Build stage
############################################################################################
FROM debian:12 AS build

# Build packages: exactly scripts/deps.sh's PACKAGES minus redis-server and redis-tools
# (the image needs no Redis). Keep this ARG on ONE line: the deploy test compares it to
# deps.sh and fails when the two lists drift apart.
ARG BUILD_PACKAGES="build-essential cmake pkg-config libhiredis-dev libevent-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libgtest-dev prometheus-cpp-dev"

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${BUILD_PACKAGES} \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# .dockerignore admits only what the CMake build and install read (CMakeLists.txt, src/ and
# redis.conf), so edits to tests, docs or scripts do not invalidate this layer.
COPY . .

# Neither the tests nor expiry-bench are built. The install rules (CMakeLists.txt) put the four
# programs, stripped, in /usr/local/bin and expiry.lua and redis.conf in
# /usr/local/share/expiry-relay.
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEXPIRY_RELAY_BUILD_TESTS=OFF -DEXPIRY_RELAY_BUILD_BENCH=OFF \
 && cmake --build build -j "$(nproc)" \
 && cmake --install build --strip --prefix /usr/local

############################################################################################
# Runtime stage
############################################################################################
FROM debian:12-slim AS runtime

# Shared libraries of the four programs (`ldd build/src/relay/expiry-relay` on Debian 12):
#   libspdlog.so.1.10 -> libspdlog1.10    libfmt.so.9       -> libfmt9
#   libhiredis.so.0.14 -> libhiredis0.14  libevent-2.1.so.7 -> libevent-2.1-7
#     (pkg-config `libevent` links the full libevent, which includes evhttp, so
#      libevent-core-2.1-7 / libevent-extra-2.1-7 are not needed)
#   libstdc++6, libgcc-s1, libc6 are already in debian:12-slim.
# curl is for the HEALTHCHECK. The ldd check below fails the build if a library is missing.
ARG RUNTIME_PACKAGES="libhiredis0.14 libevent-2.1-7 libspdlog1.10 libfmt9 libprometheus-cpp-core1.0 curl"

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
 && rm -rf /var/lib/apt/lists/*

# Fixed uid/gid so volume permissions and runAsUser policies can rely on them.
RUN groupadd --gid 10001 expiry \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin expiry

COPY --from=build \
     /usr/local/bin/expiry-relay \
     /usr/local/bin/order-canceller \
     /usr/local/bin/order-sim \
     /usr/local/bin/expiry-ctl \
     /usr/local/bin/
# The function library's source (for `redis-cli -x FUNCTION LOAD REPLACE < .../expiry.lua`) and
# the commented redis.conf.
COPY --from=build /usr/local/share/expiry-relay/ /usr/local/share/expiry-relay/

# Fail the image build (rather than the first container start) when a runtime library is
# missing, e.g. after a new dependency was added to CMakeLists.txt but not to RUNTIME_PACKAGES.
RUN set -e; \
    for b in expiry-relay order-canceller order-sim expiry-ctl; do \
      libs=$(ldd "/usr/local/bin/$b"); \
      if printf '%s\n' "$libs" | grep 'not found'; then \
        echo "$b: shared libraries missing from the runtime stage (RUNTIME_PACKAGES)" >&2; \
        exit 1; \
      fi; \
    done

# The relay serves /metrics, /healthz and /readyz on 0.0.0.0:$EXPIRY_RELAY_METRICS_PORT, and
# order-canceller on 0.0.0.0:$ORDER_CANCELLER_METRICS_PORT when that is set (docker-compose.yml
# uses 9101). The programs bind 127.0.0.1 by default, which `docker run -p` cannot reach, so
# the image binds all interfaces of the container; publish the port only where it should be
# reachable (the endpoints have no authentication, see docs/security.md).
# EXPIRY_RELAY_METRICS_PORT=0 turns the relay's server off, and the HEALTHCHECK then passes
# without probing (it cannot tell more than that the container runs).
ENV EXPIRY_RELAY_METRICS_PORT=9100 \
    EXPIRY_RELAY_METRICS_BIND=0.0.0.0 \
    ORDER_CANCELLER_METRICS_BIND=0.0.0.0
EXPOSE 9100

USER expiry

# Checks the relay (the default ENTRYPOINT). Containers that run another program override
# it: docker-compose.yml gives the order-canceller services a healthcheck on their own
# metrics port (9101) and disables it for order-sim, which serves no HTTP.
# Shell form, so the port is read from the container's environment at check time; port 0
# (server off) passes. tests/deploy/check_dockerfile_build.sh runs this command.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD port="${EXPIRY_RELAY_METRICS_PORT:-9100}"; [ "$port" = 0 ] || curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" || exit 1

# Exec form: the program is PID 1 and receives SIGTERM from `docker stop` directly; all
# four programs drain and exit 0 on SIGTERM (compose gives them stop_grace_period: 30s).
ENTRYPOINT ["expiry-relay"]
