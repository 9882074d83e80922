#!/usr/bin/env python3
"""A webhook receiver for expiry-webhook's integration tests (loopback only).

Usage: receiver.py PORT_FILE LOG_FILE SECRET [CERT KEY]
Listens on 127.0.0.1 on a free port (HTTPS with CERT and KEY) and writes the port to PORT_FILE. Every request is checked
independently of the C++ code (Standard Webhooks: HMAC-SHA256 over "<id>.<timestamp>.<body>",
keyed by the base64-decoded part of SECRET after "whsec_", a timestamp within 5 minutes; the
verify() of docs/webhooks.md) and appended to LOG_FILE as one JSON
line. The path chooses the answer:
  /ok             200
  /flaky          500, 500, then 200 (counted per webhook-id)
  /limited        429 with Retry-After: 2 the first time per webhook-id, then 200
  /gone           410 with a body
  /slow           200 after 3 s
  /hold           200 once released: every request waits until a GET /release (from then on
                  /hold answers at once); GET /held answers how many /hold requests have arrived
                  so far (including those still waiting). A held request whose client has gone
                  (killed) is still logged when released: the endpoint saw it.
"""
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log_file, secret = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
seen = {}
released = threading.Event()
held_arrivals = 0


# verify() is docs/webhooks.md's Python snippet, word for word (doc_snippets_check.py checks).
def verify(secret: str, headers, body: bytes, tolerance_s: int = 300) -> bool:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not (timestamp.isascii() and timestamp.isdigit()) or abs(time.time() - int(timestamp)) > tolerance_s:
        return False  # malformed, replayed or badly delayed, or from the future
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    for part in headers.get("webhook-signature", "").split(" "):
        version, _, sig = part.partition(",")
        if version == "v1" and hmac.compare_digest(sig.encode(), expected):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=None):
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a killed dispatcher)

    def do_GET(self):
        global held_arrivals
        if self.path == "/release":
            released.set()
            self.answer(200, b"released")
        elif self.path == "/held":
            with lock:
                self.answer(200, str(held_arrivals).encode())
        else:
            self.answer(404, b"no such path")

    def do_POST(self):
        global held_arrivals
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        msg_id = self.headers.get("webhook-id", "")
        timestamp = self.headers.get("webhook-timestamp", "")
        with lock:
            count = seen.get((self.path, msg_id), 0) + 1
            seen[(self.path, msg_id)] = count
        status, extra, reply = 200, {}, b"ok"
        if self.path == "/flaky" and count <= 2:
            status, reply = 500, b"try later"
        elif self.path == "/limited" and count == 1:
            status, extra, reply = 429, {"Retry-After": "2"}, b"slow down"
        elif self.path == "/gone":
            status, reply = 410, b"endpoint retired"
        elif self.path == "/slow":
            time.sleep(3)
        elif self.path == "/hold":
            with lock:
                held_arrivals += 1
            released.wait()
        record = {
            "path": self.path,
            "id": msg_id,
            "timestamp": timestamp,
            "verified": verify(secret, self.headers, body),
            "signature": self.headers.get("webhook-signature", ""),
            "content_type": self.headers.get("content-type", ""),
            "traceparent": self.headers.get("traceparent", ""),
            "header_names": sorted(name.lower() for name in self.headers.keys()),
            "body": body.decode("utf-8", "replace"),
            "status": status,
            "count": count,
            "at": time.time(),
        }
        with lock:
            with open(log_file, "a") as f:
                f.write(json.dumps(record) + "\n")
        self.answer(status, reply, extra)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if len(sys.argv) > 5:
    import ssl  # noqa: E402

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[4], sys.argv[5])
    server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402

os.rename(port_file + ".tmp", port_file)
server.serve_forever()
