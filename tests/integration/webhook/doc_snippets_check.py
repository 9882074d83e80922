#!/usr/bin/env python3
"""Checks the signature-verifying snippets of docs/webhooks.md ("Verifying a signature") as real receivers.

Usage: doc_snippets_check.py DOCS_WEBHOOKS_MD RECEIVER_PY
- The Python snippet's verify() must appear word for word in receiver.py (which checks every request of the
  integration tests, signed by expiry-webhook itself, with it).
- Each snippet (Python; Node.js if `node` is on PATH; Go if `go` is) runs inside an HTTP server of its
  language's standard library on 127.0.0.1 (a free port, reported back): Python's
  http.server.ThreadingHTTPServer (headers from self.headers), Node's node:http createServer (headers
  from req.headers, the body as a Buffer), Go's net/http (r.Header). Each answers a POST with 204 when the
  snippet's verify() accepts it and 401 when it refuses it, so the header bytes go through the framework's
  own parsing and decoding (Python's http.server and Node's http read header bytes as Latin-1), which is
  where a non-ASCII webhook-id broke before expiry-webhook percent-encoded it.
- Every case is sent over a real socket, its bytes written as expiry-webhook (libcurl) writes them: a
  valid request, one signature of two valid (a rotation), a wrong key, a changed body, id or timestamp, a
  stale and a future timestamp, a malformed timestamp, no signature, another version, a truncated
  signature, and a non-ASCII task id percent-encoded as expiry-webhook sends it. The signatures here are
  made with hmac/hashlib directly, not with the snippets. A non-ASCII id sent as raw UTF-8 bytes (which
  expiry-webhook never sends) is reported per language, never failed on: see RAW_UTF8_ID below.
A language whose tool is missing is reported as skipped, never as passed, and fails the check when
EXPIRY_SNIPPETS_REQUIRE_ALL=1 (.ci/run sets it; scripts/deps.sh --ci installs node's npm and golang-go).
Every server is stopped on every exit (shutdown() for Python's; the node and go processes by pid, and they
also exit when their stdin, a pipe from this script, closes). Exits 1 on a failure.
"""
import base64
import hashlib
import hmac
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

doc_path, receiver_path = sys.argv[1], sys.argv[2]
doc = open(doc_path).read()
section = doc[doc.index("### Verifying a signature"):]
section = section[:section.index("\n## ")]
blocks = dict(re.findall(r"```(\w+)\n(.*?)```", section, re.S))
failures = []

secret = "whsec_" + base64.b64encode(b"doc-snippets-key-0123456789abcd").decode()
other = "whsec_" + base64.b64encode(b"some-other-key-0123456789abcdef").decode()
PORT_WAIT_S = {"js": 30, "go": 60}  # from the server's start to its "PORT n" line
GO_BUILD_TIMEOUT_S = 180
REQUEST_TIMEOUT_S = 10
body = '{"order_id":"42","note":"caf\u00e9"}'.encode()


def sign(secret_, msg_id: bytes, timestamp, body):
    key = base64.b64decode(secret_[len("whsec_"):])
    mac = hmac.new(key, msg_id + f".{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


# The id as expiry-webhook sends a non-ASCII task id since the fix: src/webhook/signature.cpp's
# webhook_id_of() percent-encodes the task id and the occurrence with src/base/percent_encoding's
# percent_encode_visible_ascii (every byte outside 0x21..0x7E, and '%', as upper-case %XX), and signs
# that very string.
def percent_encode_visible_ascii(raw: bytes) -> bytes:
    return b"".join(bytes([c]) if 0x21 <= c <= 0x7E and c != 0x25 else b"%%%02X" % c for c in raw)


ID = b"order:42.1700000000000"
UTF8_ID = "commande:caf\u00e9".encode() + b".1700000000000"
ENCODED_ID = percent_encode_visible_ascii("commande:caf\u00e9".encode()) + b".1700000000000"
assert ENCODED_ID == b"commande:caf%C3%A9.1700000000000"
RAW_UTF8_ID = "a non-ASCII task id as raw UTF-8 bytes"
# What each server does with RAW_UTF8_ID (the id's UTF-8 bytes in webhook-id, signed over those bytes;
# what expiry-webhook sent before the fix, never since):
# - Python: http.server parses the header block with http.client.parse_headers, which decodes the bytes as
#   Latin-1; verify() then encodes "commande:caf\u00c3\u00a9" as UTF-8 (C3 83 C2 A9, not C3 A9), signs other
#   bytes and refuses: 401.
# - Node: node:http (llhttp) accepts the bytes (obs-text) and hands them to JS as a Latin-1 string; the
#   template literal given to Hmac.update() is encoded as UTF-8 again: other bytes, refused: 401.
# - Go: net/http keeps header values as the bytes received (a Go string is bytes), []byte(id + ...) signs
#   exactly them: accepted, 204.
# A correct receiver verifies the bytes that were signed, so the right verdict is "accepted"; the Python and
# Node snippets cannot give it without undoing their framework's decoding, which they need not do since
# expiry-webhook's ids are visible ASCII. The case is therefore reported, not failed on; the percent-encoded
# case is what must verify in all three.


def make_cases(now):
    """The cases, signed with timestamps relative to `now` (made just before each server is asked)."""
    good = sign(secret, ID, now, body)
    cases = []

    def case(name, expected, msg_id=ID, timestamp=now, signature=good, body_=body, report_only=False):
        # Header lines in the order and form expiry-webhook (src/webhook/dispatcher.cpp) sends them.
        headers = [(b"content-type", b"application/json"), (b"webhook-id", msg_id),
                   (b"webhook-timestamp", str(timestamp).encode())]
        if signature is not None:
            headers.append((b"webhook-signature", signature.encode()))
        cases.append({"name": name, "headers": headers, "body": body_, "expected": expected,
                      "report_only": report_only})

    case("valid", True)
    case("the second of two signatures (rotation)", True, signature=sign(other, ID, now, body) + " " + good)
    case("signed with another key", False, signature=sign(other, ID, now, body))
    case("body changed", False, body_=body + b" ")
    case("id changed", False, msg_id=b"order:43.1700000000000")
    case("timestamp changed", False, timestamp=str(int(now) - 1))
    stale = str(int(now) - 600)
    case("10 minutes old", False, timestamp=stale, signature=sign(secret, ID, stale, body))
    future = str(int(now) + 600)
    case("10 minutes ahead", False, timestamp=future, signature=sign(secret, ID, future, body))
    recent = str(int(now) - 60)
    case("a minute old", True, timestamp=recent, signature=sign(secret, ID, recent, body))
    case("malformed timestamp", False, timestamp="soon")
    case("no signature", False, signature=None)
    case("another version", False, signature="v2," + good[3:])
    case("truncated signature", False, signature=good[:-4])
    # A task id that is not ASCII, as expiry-webhook sends it: percent-encoded (docs/webhooks.md).
    case("a non-ASCII task id, percent-encoded", True, msg_id=ENCODED_ID, signature=sign(secret, ENCODED_ID, now, body))
    # The same id as raw UTF-8 bytes, signed over them: see RAW_UTF8_ID above (reported, not failed on).
    case(RAW_UTF8_ID, True, msg_id=UTF8_ID, signature=sign(secret, UTF8_ID, now, body), report_only=True)
    return cases


def post(port, c):
    """Sends case `c` as one POST over a fresh connection; the answer's status code, or an error string."""
    head = [b"POST /webhook HTTP/1.1", b"Host: 127.0.0.1:%d" % port, b"Accept: */*"]
    head += [name + b": " + value for name, value in c["headers"]]
    head.append(b"Content-Length: %d" % len(c["body"]))
    request = b"\r\n".join(head) + b"\r\n\r\n" + c["body"]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT_S) as s:
            s.sendall(request)
            answer = b""
            while b"\r\n" not in answer:  # the status line is all that is needed
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except OSError as e:
        return f"error: {e}"
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(match.group(1)) if match else f"no HTTP answer: {answer[:80]!r}"


def verdict(status):
    return {204: "accepted (204)", 401: "refused (401)"}.get(status, str(status))


def check(language, port):
    cases = make_cases(str(int(time.time())))
    bad = sent = 0
    for c in cases:
        got = post(port, c)
        sent += 1
        if c["report_only"]:
            agrees = "as a correct receiver would" if got == (204 if c["expected"] else 401) else \
                "not what a correct receiver would answer (reported only: expiry-webhook never sends it)"
            print(f"info - {language}: {c['name']}: {verdict(got)}, {agrees}")
            continue
        if got != (204 if c["expected"] else 401):
            bad += 1
            failures.append(f"{language}: {c['name']}: got {verdict(got)}, want "
                            f"{'accepted (204)' if c['expected'] else 'refused (401)'}")
            if not isinstance(got, int):  # no answer (timed out, refused, closed): the server is not worth more waits
                failures.append(f"{language}: the cases after '{c['name']}' not sent")
                break
    print(f"{'ok  ' if not bad else 'FAIL'} - {language} snippet in a real server ({sent} of {len(cases)} requests sent)")


def skipped(what):
    if os.environ.get("EXPIRY_SNIPPETS_REQUIRE_ALL") == "1":
        failures.append("missing: " + what)
    else:
        print("skip - " + what)


processes = []  # servers started here, stopped on every exit


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdin:
        proc.stdin.close()


def start_server(language, argv, cwd, env, stderr_path):
    """Starts a server process that prints "PORT n"; its port, or None (a failure recorded)."""
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    processes.append(proc)
    deadline = time.monotonic() + PORT_WAIT_S[language]
    out = b""
    while True:
        match = re.search(rb"^PORT (\d+)\r?\n", out, re.M)
        if match:
            return int(match.group(1))
        left = deadline - time.monotonic()
        if left <= 0:
            why = f"no PORT line within {PORT_WAIT_S[language]} s"
            break
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                why = f"exited with {proc.wait(timeout=5)} before its PORT line"
                break
            out += chunk
    stop(proc)
    failures.append(f"{language}: the server did not start: {why}: {out.decode(errors='replace')}"
                    f"{open(stderr_path, 'rb').read().decode(errors='replace')}")
    return None


NODE_SERVER = r'''import { createServer } from "node:http";
import { verify } from "./verify.mjs";

const secret = process.env.SNIPPET_SECRET;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let ok;
    try {
      ok = verify(secret, req.headers, Buffer.concat(chunks));
    } catch (e) {
      res.writeHead(500).end(String(e));
      return;
    }
    res.writeHead(ok ? 204 : 401).end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
// The checker's pipe: when it closes (the checker is done or gone), stop.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
'''

GO_SERVER = '''package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"snippets/webhooks"
)

func main() {
	secret := os.Getenv("SNIPPET_SECRET")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The checker's pipe: when it closes (the checker is done or gone), stop.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			if webhooks.Verify(secret, r.Header, body, 5*time.Minute) {
				w.WriteHeader(http.StatusNoContent)
			} else {
				w.WriteHeader(http.StatusUnauthorized)
			}
		})}
	fmt.Printf("PORT %d\\n", ln.Addr().(*net.TCPAddr).Port)
	fmt.Fprintln(os.Stderr, srv.Serve(ln))
	os.Exit(1)
}
'''


def python_server(verify):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            request_body = self.rfile.read(int(self.headers.get("content-length", "0")))
            ok = verify(secret, self.headers, request_body)
            self.send_response(204 if ok else 401)
            if not ok:
                self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def on_sigterm(signum, frame):
    sys.exit(128 + signum)  # runs the finally below: every server stopped


signal.signal(signal.SIGTERM, on_sigterm)
work = tempfile.mkdtemp(prefix="webhook-doc-snippets-")
try:
    # Python: the receiver's verify() is the snippet.
    python = blocks["python"]
    if python[python.index("def verify"):].strip() not in open(receiver_path).read():
        failures.append("python: the snippet is not receiver.py's verify() word for word")
    namespace = {}
    exec(python, namespace)
    server = python_server(namespace["verify"])
    try:
        check("python", server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()

    server_env = dict(os.environ, SNIPPET_SECRET=secret)
    if shutil.which("node"):
        with open(os.path.join(work, "verify.mjs"), "w") as f:
            f.write(blocks["js"])
        with open(os.path.join(work, "server.mjs"), "w") as f:
            f.write(NODE_SERVER)
        port = start_server("js", ["node", "server.mjs"], work, server_env, os.path.join(work, "node.err"))
        if port is not None:
            check("js", port)
            stop(processes[-1])
    else:
        skipped("js snippet (no node on PATH)")

    if shutil.which("go"):
        go_dir = os.path.join(work, "go")
        os.makedirs(os.path.join(go_dir, "webhooks"))
        with open(os.path.join(go_dir, "go.mod"), "w") as f:
            f.write("module snippets\n\ngo 1.18\n")
        with open(os.path.join(go_dir, "webhooks", "verify.go"), "w") as f:
            f.write(blocks["go"])
        with open(os.path.join(go_dir, "main.go"), "w") as f:
            f.write(GO_SERVER)
        # Offline and standard library only; built first, so that the pid stopped is the server's.
        go_env = dict(server_env, GOFLAGS="-mod=mod", GOPROXY="off",
                      GOCACHE=os.path.join(work, "gocache"), GOPATH=os.path.join(work, "gopath"))
        try:
            out = subprocess.run(["go", "build", "-o", "server", "."], cwd=go_dir, capture_output=True, text=True,
                                 timeout=GO_BUILD_TIMEOUT_S, env=go_env)
        except subprocess.TimeoutExpired:
            out = None
        if out is None or out.returncode != 0:
            failures.append("go: go build failed: " +
                            (f"not done within {GO_BUILD_TIMEOUT_S} s" if out is None else out.stdout + out.stderr))
        else:
            port = start_server("go", [os.path.join(go_dir, "server")], go_dir, go_env, os.path.join(work, "go.err"))
            if port is not None:
                check("go", port)
                stop(processes[-1])
    else:
        skipped("go snippet (no go on PATH)")
finally:
    for proc in processes:
        stop(proc)
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL -", f)
sys.exit(1 if failures else 0)
