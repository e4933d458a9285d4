#!/usr/bin/env bash
# `npm run demo`: replay examples/demo-transcript.jsonl in a hardened container against a COPY of
# examples/workspace. Builds warden if needed; checks afterwards that the host workspace is byte-for-byte
# unchanged and that no container of the demo session is left behind.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'demo: %s\n' "$*" >&2; }

if [ ! -f dist/cli/main.js ] || [ -n "$(find src -name '*.ts' -newer dist/cli/main.js -print -quit)" ]; then
  say "building warden"
  npm run --silent build
fi
if ! docker info >/dev/null 2>&1; then
  bash scripts/ensure-docker.sh
fi

workspace=examples/workspace
fingerprint() { (cd "$workspace" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
before="$(fingerprint)"

out="${WARDEN_DEMO_OUT:-${TMPDIR:-/tmp}/warden-demo-results.jsonl}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

node bin/warden.js replay examples/demo-transcript.jsonl --workspace "$workspace" --mode copy --out "$out" \
  | tee "$log"

session="$(sed -n 's/^.*session \([0-9a-f-]\{36\}\).*$/\1/p' "$log" | head -n 1)"
if [ -n "$session" ] && [ -n "$(docker ps -aq --filter "label=io.warden.session=$session")" ]; then
  say "FAIL: a container of session $session is still there"
  exit 1
fi
if [ "$(fingerprint)" != "$before" ]; then
  say "FAIL: the host workspace $workspace changed"
  exit 1
fi
say "host workspace $workspace untouched; no container left for session ${session:-?}; results in $out"
