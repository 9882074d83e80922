#!/usr/bin/env python3
"""Checks the signature-verifying snippets of docs/webhooks.md ("Verifying a signature").

Usage: doc_snippets_check.py DOCS_WEBHOOKS_MD RECEIVER_PY
- The Python snippet's verify() must appear word for word in receiver.py (which checks every request of the
  integration tests, signed by expiry-webhook itself, with it).
- Each snippet (Python; Node.js if `node` is on PATH; Go if `go` is) is run on the same cases: a
  valid request, one signature of two valid (a rotation), a wrong key, a changed body, id or
  timestamp, a stale and a future timestamp, a malformed timestamp, no signature, another
  version. The signatures here are made with hmac/hashlib directly, not with the snippets.
A language whose tool is missing is reported as skipped, never as passed, and fails the check when
EXPIRY_SNIPPETS_REQUIRE_ALL=1 (.ci/run sets it; scripts/deps.sh --ci installs node's npm and golang-go).
Exits 1 on a failure.
"""
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

doc_path, receiver_path = sys.argv[1], sys.argv[2]
doc = open(doc_path).read()
section = doc[doc.index("### Verifying a signature"):]
section = section[:section.index("\n## ")]
blocks = dict(re.findall(r"```(\w+)\n(.*?)```", section, re.S))
failures = []

secret = "whsec_" + base64.b64encode(b"doc-snippets-key-0123456789abcd").decode()
other = "whsec_" + base64.b64encode(b"some-other-key-0123456789abcdef").decode()


def sign(secret_, msg_id, timestamp, body):
    key = base64.b64decode(secret_[len("whsec_"):])
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


now = str(int(time.time()))
body = '{"order_id":"42","note":"caf\u00e9"}'.encode()
good = sign(secret, "order:42.1700000000000", now, body)
cases = []  # (name, headers, body, expected)


def case(name, expected, msg_id="order:42.1700000000000", timestamp=now, signature=good, body_=body):
    headers = {"webhook-id": msg_id, "webhook-timestamp": timestamp}
    if signature is not None:
        headers["webhook-signature"] = signature
    cases.append({"name": name, "headers": headers, "body": base64.b64encode(body_).decode(), "expected": expected})


case("valid", True)
case("the second of two signatures (rotation)", True, signature=sign(other, "order:42.1700000000000", now, body) + " " + good)
case("signed with another key", False, signature=sign(other, "order:42.1700000000000", now, body))
case("body changed", False, body_=body + b" ")
case("id changed", False, msg_id="order:43.1700000000000")
case("timestamp changed", False, timestamp=str(int(now) - 1))
stale = str(int(now) - 600)
case("10 minutes old", False, timestamp=stale, signature=sign(secret, "order:42.1700000000000", stale, body))
future = str(int(now) + 600)
case("10 minutes ahead", False, timestamp=future, signature=sign(secret, "order:42.1700000000000", future, body))
recent = str(int(now) - 60)
case("a minute old", True, timestamp=recent, signature=sign(secret, "order:42.1700000000000", recent, body))
case("malformed timestamp", False, timestamp="soon")
case("no signature", False, signature=None)
case("another version", False, signature="v2," + good[3:])
case("truncated signature", False, signature=good[:-4])
# A task id that is not ASCII, as expiry-webhook sends it: percent-encoded (docs/webhooks.md).
encoded_id = "commande:caf%C3%A9.1700000000000"
case("a non-ASCII task id, percent-encoded", True, msg_id=encoded_id, signature=sign(secret, encoded_id, now, body))


def check(language, results):
    for c, got in zip(cases, results):
        if got is not c["expected"]:
            failures.append(f"{language}: {c['name']}: got {got}, want {c['expected']}")
    if len(results) != len(cases):
        failures.append(f"{language}: {len(results)} results for {len(cases)} cases")
    print(f"{'ok  ' if not any(f.startswith(language + ':') for f in failures) else 'FAIL'} - {language} snippet")


# Python: the receiver's verify() is the snippet.
python = blocks["python"]
if python[python.index("def verify"):].strip() not in open(receiver_path).read():
    failures.append("python: the snippet is not receiver.py's verify() word for word")
namespace = {}
exec(python, namespace)
check("python", [namespace["verify"](secret, c["headers"], base64.b64decode(c["body"])) for c in cases])

def skipped(what):
    if os.environ.get("EXPIRY_SNIPPETS_REQUIRE_ALL") == "1":
        failures.append("missing: " + what)
    else:
        print("skip - " + what)


work = tempfile.mkdtemp(prefix="webhook-doc-snippets-")
try:
    with open(os.path.join(work, "cases.json"), "w") as f:
        json.dump({"secret": secret, "cases": cases}, f)

    if shutil.which("node"):
        with open(os.path.join(work, "verify.mjs"), "w") as f:
            f.write(blocks["js"])
        with open(os.path.join(work, "run.mjs"), "w") as f:
            f.write('import { verify } from "./verify.mjs";\n'
                    'import { readFileSync } from "node:fs";\n'
                    'const { secret, cases } = JSON.parse(readFileSync(process.argv[2], "utf8"));\n'
                    'console.log(JSON.stringify(cases.map((c) => verify(secret, c.headers, Buffer.from(c.body, "base64")))));\n')
        out = subprocess.run(["node", os.path.join(work, "run.mjs"), os.path.join(work, "cases.json")],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            failures.append("js: node failed: " + out.stderr)
        else:
            check("js", json.loads(out.stdout))
    else:
        skipped("js snippet (no node on PATH)")

    if shutil.which("go"):
        go_dir = os.path.join(work, "go")
        os.mkdir(go_dir)
        with open(os.path.join(go_dir, "go.mod"), "w") as f:
            f.write("module webhooks\n\ngo 1.18\n")
        with open(os.path.join(go_dir, "verify.go"), "w") as f:
            f.write(blocks["go"])
        with open(os.path.join(go_dir, "verify_test.go"), "w") as f:
            f.write('''package webhooks

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

func TestCases(t *testing.T) {
	raw, err := os.ReadFile(os.Getenv("CASES"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Secret string
		Cases  []struct {
			Headers map[string]string
			Body    string
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	var results []bool
	for _, c := range in.Cases {
		h := http.Header{}
		for k, v := range c.Headers {
			h.Set(k, v)
		}
		body, _ := base64.StdEncoding.DecodeString(c.Body)
		results = append(results, Verify(in.Secret, h, body, 5*time.Minute))
	}
	out, _ := json.Marshal(results)
	fmt.Println("RESULTS " + string(out))
}
''')
        env = dict(os.environ, CASES=os.path.join(work, "cases.json"), GOFLAGS="-mod=mod", GOPROXY="off",
                   GOCACHE=os.path.join(work, "gocache"), GOPATH=os.path.join(work, "gopath"))
        out = subprocess.run(["go", "test", "-count=1", "-v", "./..."], cwd=go_dir, capture_output=True, text=True,
                             timeout=300, env=env)
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULTS ")), None)
        if out.returncode != 0 or line is None:
            failures.append("go: go test failed: " + out.stdout + out.stderr)
        else:
            check("go", json.loads(line[len("RESULTS "):]))
    else:
        skipped("go snippet (no go on PATH)")
finally:
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL -", f)
sys.exit(1 if failures else 0)
