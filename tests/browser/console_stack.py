"""The processes the browser tests run against: a redis-server, an expiry-relay and expiry-api,
each on a free loopback port in a scratch directory, started by the test and stopped by their
pids (never by name). Every wait polls a condition until a deadline; nothing sleeps a fixed time.
"""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

READ_TOKEN = "read-token-aaaaaaaaaaaaaaaa"
WRITE_TOKEN = "write-token-bbbbbbbbbbbbbbbb"
ADMIN_TOKEN = "admin-token-cccccccccccccccc"
# Named write tokens (name=): the audit trail records their actions under these names.
ORDER_TOKEN = "order-token-dddddddddddddddd"
ORDER_NAME = "order-service"
BILLING_TOKEN = "billing-token-eeeeeeeeeeeeeeee"
BILLING_NAME = "billing-service"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, what, timeout=20.0, interval=0.05):
    """Polls condition() until it returns a true value (returned) or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as e:  # a condition that cannot be checked yet (a server starting)
            last_error = e
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s%s" %
                                 (timeout, what, " (last error: %s)" % last_error if last_error else ""))
        time.sleep(interval)


class ConsoleStack:
    """redis-server + expiry-relay + expiry-api; use as a context manager."""

    def __init__(self, build_dir):
        self.build_dir = build_dir
        self.scratch = tempfile.TemporaryDirectory(prefix="expiry_console_")
        self.dir = self.scratch.name
        self.children = []  # (name, Popen), stopped in reverse order
        self.redis_port = free_port()
        self.api_port = free_port()
        self.redis_url = "redis://127.0.0.1:%d/0" % self.redis_port

    def program(self, path):
        return os.path.join(self.build_dir, path)

    def spawn(self, name, argv):
        log = open(os.path.join(self.dir, name + ".log"), "wb")
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self.children.append((name, child))
        return child

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name + ".log"), "rb") as f:
                return f.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        redis = self.spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--daemonize", "no",
                                     "--notify-keyspace-events", "Ex", "--dir", self.dir])
        wait_for(lambda: redis.poll() is None and self.redis("PING") == "PONG", "redis-server to answer PING")
        relay = self.spawn("relay", [self.program("src/relay/expiry-relay"), "--redis-url", self.redis_url,
                                     "--instance", "browser-relay", "--health-probe-interval-ms", "200"])
        # The relay is ready once it loaded the library, created the group and subscribed. It
        # subscribes on its own connection, beside the library load and XGROUP CREATE (sent in that
        # order on another): both are waited for, as relay_ready() does in relay_harness.h.
        wait_for(lambda: relay.poll() is None and
                 "expiry:health:browser-relay" in self.redis("PUBSUB", "CHANNELS", "expiry:health:*") and
                 "workers" in self.redis_raw("XINFO", "GROUPS", "expiry:stream").split(),
                 "the relay to create its group and subscribe (log: %s)" % self.log("relay"))
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            # The first three unnamed (line-1, line-2, line-3), as files written before names were.
            f.write("read %s\nwrite %s\nadmin %s\n" % (READ_TOKEN, WRITE_TOKEN, ADMIN_TOKEN))
            f.write("write %s name=%s\nwrite %s name=%s\n" % (ORDER_TOKEN, ORDER_NAME, BILLING_TOKEN, BILLING_NAME))
        api = self.spawn("api", [self.program("src/api/expiry-api"), "--listen", "127.0.0.1:%d" % self.api_port,
                                 "--tokens-file", tokens, "--redis-url", self.redis_url, "--threads", "2"])
        wait_for(lambda: api.poll() is None and self.http("/healthz")[0] == 200,
                 "expiry-api to answer /healthz (log: %s)" % self.log("api"))

    def stop(self):
        for name, child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait(timeout=10)
        self.children = []
        self.scratch.cleanup()

    @property
    def url(self):
        return "http://127.0.0.1:%d/" % self.api_port

    def redis(self, *args):
        """One command through redis-cli; its output without the trailing newline."""
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.redis_port), "--no-raw"] + list(args),
                             capture_output=True, timeout=10, check=True)
        return out.stdout.decode("utf-8", "replace").strip().strip('"')

    def redis_raw(self, *args):
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.redis_port), "--raw"] + list(args),
                             capture_output=True, timeout=10, check=True)
        return out.stdout.decode("utf-8", "replace")

    def redis_now_ms(self):
        seconds, micros = self.redis_raw("TIME").split()
        return int(seconds) * 1000 + int(micros) // 1000

    def ctl(self, *args):
        out = subprocess.run([self.program("src/ctl/expiry-ctl"), "--redis-url", self.redis_url] + list(args),
                             capture_output=True, timeout=30)
        if out.returncode != 0:
            raise AssertionError("expiry-ctl %s exited %d: %s" % (" ".join(args), out.returncode,
                                                                   out.stderr.decode("utf-8", "replace")))
        return out.stdout.decode("utf-8", "replace")

    def http(self, path, token=None, method="GET", body=None):
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.api_port, path), method=method)
        if token:
            request.add_header("Authorization", "Bearer " + token)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, data=data, timeout=10) as r:
                return r.status, dict(r.headers), r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode("utf-8", "replace")
