#!/usr/bin/env bash
# Deploy test: docs/openapi.json (what expiry-api serves at /v1/openapi.json) is a valid OpenAPI
# 3.1 description, checked by an independent validator from npm
# (@seriousme/openapi-schema-validator, the official OpenAPI JSON schemas), pinned by
# tests/deploy/openapi/package-lock.json and installed with `npm ci` into
# BUILD_DIR/_deps/openapi-validator once. Fails, never skips, without npm (scripts/deps.sh
# installs it).
# Usage: tests/deploy/check_openapi.sh [BUILD_DIR]
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
cd "$ROOT" || exit 1
# shellcheck source=tests/deploy/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if ! command -v npm >/dev/null 2>&1; then
  fail "npm not found: scripts/deps.sh installs it"
  finish
fi
dir=$BUILD_DIR/_deps/openapi-validator
validator=$dir/node_modules/.bin/validate-api
if [ ! -x "$validator" ] || ! cmp -s "$dir/package-lock.json" tests/deploy/openapi/package-lock.json; then
  rm -rf "$dir"
  mkdir -p "$dir"
  cp tests/deploy/openapi/package.json tests/deploy/openapi/package-lock.json "$dir/"
  if ! (cd "$dir" && npm ci --no-audit --no-fund >npm-ci.log 2>&1); then
    tail -n 20 "$dir/npm-ci.log" >&2
    fail "npm ci of the OpenAPI validator failed (log: $dir/npm-ci.log)"
    finish
  fi
fi

check "docs/openapi.json is OpenAPI 3.1" grep -q '"openapi": *"3\.1\.' docs/openapi.json
output=$("$validator" docs/openapi.json 2>&1)
echo "$output" | sed 's/^/# /'
check "the validator accepts docs/openapi.json" grep -q '"valid": *true' <<<"$output"
finish
