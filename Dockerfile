# expiry-relay container image: one image, seven programs.
#
#   expiry-relay      the relay (default ENTRYPOINT)
#   order-canceller   the demo consumer-group worker      (--entrypoint order-canceller)
#   order-sim         the demo order generator            (--entrypoint order-sim)
#   expiry-ctl        the operator CLI, e.g. `expiry-ctl stats` (--entrypoint expiry-ctl)
#   expiry-api        the HTTP scheduling API, docs/api.md (--entrypoint expiry-api)
#   expiry-webhook    signed webhook delivery, docs/webhooks.md (--entrypoint expiry-webhook)
#   order-webhook     the demo order service's webhook endpoint (--entrypoint order-webhook)
#
# All configuration is through environment variables (EXPIRY_RELAY_*, ORDER_CANCELLER_*,
# ORDER_SIM_*, EXPIRY_API_*, EXPIRY_WEBHOOK_*, ORDER_WEBHOOK_*; expiry-webhook's webhook JSON is
# its --config argument); see docker-compose.yml for a complete setup with Redis, and
# docker-compose.tls.yml for the same over TLS (rediss://, docs/security.md).
#
#   docker build -t expiry-relay:local .
#
# Tested by tests/deploy/check_dockerfile_packages.sh and check_dockerfile_build.sh
# (ctest -L deploy).

############################################################################################
# Build stage
############################################################################################
FROM debian:13 AS build

# Build packages: exactly scripts/deps.sh's PACKAGES minus redis-server and redis-tools (the
# image needs no Redis), plus its HIREDIS_PACKAGE: Debian 13's libhiredis-dev is hiredis 1.2
# with hiredis_ssl, so the image uses it instead of building hiredis from source as deps.sh
# does on Debian 12. Keep this ARG on ONE line: the deploy test compares it to deps.sh and
# fails when the two lists drift apart.
ARG BUILD_PACKAGES="build-essential cmake pkg-config libssl-dev libhiredis-dev libevent-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libgtest-dev prometheus-cpp-dev libcurl4-openssl-dev libhowardhinnant-date-dev tzdata"

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${BUILD_PACKAGES} \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# .dockerignore admits only what the CMake build and install read (CMakeLists.txt, src/ and
# redis.conf), so edits to tests, docs or scripts do not invalidate this layer. It also keeps
# out the host's build/_deps/hiredis-1.2.0 (scripts/hiredis.sh's Debian 12 build), which
# CMakeLists.txt would otherwise prefer to the system's libhiredis-dev.
COPY . .

# Neither the tests nor expiry-bench are built. -O2, as Debian builds its packages (CMake's
# Release default is -O3, which compiles slower). The install rules (CMakeLists.txt) put the seven
# programs, stripped, in /usr/local/bin and expiry.lua and redis.conf in
# /usr/local/share/expiry-relay.
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DEXPIRY_RELAY_BUILD_TESTS=OFF -DEXPIRY_RELAY_BUILD_BENCH=OFF \
 && cmake --build build -j "$(nproc)" \
 && cmake --install build --strip --prefix /usr/local

############################################################################################
# Runtime stage
############################################################################################
FROM debian:13-slim AS runtime

# Shared libraries of the seven programs built on Debian 13, and their packages there:
#   libhiredis.so.1.1.0, libhiredis_ssl.so.1.1.0 -> libhiredis1.1.0
#     (dynamic here; scripts/hiredis.sh links hiredis statically on Debian 12)
#   libssl.so.3, libcrypto.so.3                  -> libssl3t64
#   libevent-2.1.so.7                            -> libevent-2.1-7t64
#     (pkg-config `libevent` links the full libevent, which includes evhttp, so
#      libevent-core-2.1-7t64 / libevent-extra-2.1-7t64 are not needed)
#   libspdlog.so.1.15 -> libspdlog1.15           libfmt.so.10 -> libfmt10
#   libprometheus-cpp-core.so.1.0                -> libprometheus-cpp-core1.0
#   libevent_openssl-2.1.so.7 (expiry-api's HTTPS) -> libevent-openssl-2.1-7t64
#   libcurl.so.4 (expiry-webhook)                -> libcurl4t64
#   libdate-tz.so.3 (the time zones of src/recur) -> libdate-tz3
# tzdata is /usr/share/zoneinfo, which libdate-tz reads at run time (Debian builds it with
# USE_OS_TZDB: it never downloads a database) and which debian:13-slim lacks; the ldd check
# below cannot see it missing, tests/deploy/check_dockerfile_packages.sh does.
#   libstdc++6, libgcc-s1, libc6 (libm) are already in debian:13-slim.
# ca-certificates is the default CA store: a rediss:// URL without --tls-ca-cert-file or
# --tls-ca-cert-dir verifies the server against it (it also brings the `openssl` package,
# whose /usr/lib/ssl/certs and cert.pem links are where OpenSSL looks by default).
# curl is for the HEALTHCHECK. The ldd check below fails the build if a library is missing.
ARG RUNTIME_PACKAGES="libhiredis1.1.0 libssl3t64 libevent-2.1-7t64 libevent-openssl-2.1-7t64 libspdlog1.15 libfmt10 libprometheus-cpp-core1.0 libcurl4t64 libdate-tz3 tzdata ca-certificates curl"

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

# Fixed uid/gid so volume permissions and runAsUser policies can rely on them.
RUN groupadd --gid 10001 expiry \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin expiry

COPY --from=build \
     /usr/local/bin/expiry-relay \
     /usr/local/bin/order-canceller \
     /usr/local/bin/order-sim \
     /usr/local/bin/expiry-ctl \
     /usr/local/bin/expiry-api \
     /usr/local/bin/expiry-webhook \
     /usr/local/bin/order-webhook \
     /usr/local/bin/
# The function library's source (for `redis-cli -x FUNCTION LOAD REPLACE < .../expiry.lua`) and
# the commented redis.conf.
COPY --from=build /usr/local/share/expiry-relay/ /usr/local/share/expiry-relay/

# Fail the image build (rather than the first container start) when a runtime library is
# missing, e.g. after a new dependency was added to CMakeLists.txt but not to RUNTIME_PACKAGES.
RUN set -e; \
    for b in expiry-relay order-canceller order-sim expiry-ctl expiry-api expiry-webhook order-webhook; do \
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
# it: docker-compose.yml gives the order-canceller, expiry-api, expiry-webhook and
# order-webhook services a healthcheck on their own ports and disables it for order-sim, which
# serves no HTTP.
# Shell form, so the port is read from the container's environment at check time; port 0
# (server off) passes. tests/deploy/check_dockerfile_build.sh runs this command.
HEALTHCHECK --interval=5s --timeout=3s --start-period=15s --retries=3 \
  CMD port="${EXPIRY_RELAY_METRICS_PORT:-9100}"; [ "$port" = 0 ] || curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" || exit 1

# Exec form: the program is PID 1 and receives SIGTERM from `docker stop` directly; all
# the programs drain (or stop) and exit 0 on SIGTERM (compose gives them stop_grace_period: 30s).
ENTRYPOINT ["expiry-relay"]
