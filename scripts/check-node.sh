#!/usr/bin/env bash
# Stops with a clear error when the `node` on PATH is older than package.json's engines.node
# (a ">=X.Y.Z" range) or missing, naming the fix: scripts/ensure-node.sh and the PATH line.
# Exit 0 (and no output) when it is new enough. Run first by scripts/setup.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# The range is read with sed, not node: the node on PATH may be too old or missing.
need="$(sed -n 's/^ *"node": *">=\([0-9][0-9.]*\)".*/\1/p' package.json | head -n 1)"
if [ -z "$need" ]; then
  echo "check-node: package.json has no engines.node of the form \">=X.Y.Z\"" >&2
  exit 1
fi
have="$(node -p 'process.versions.node' 2>/dev/null || true)"
if [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" = "$need" ]; then
  exit 0
fi
cat >&2 <<MSG
check-node: warden needs Node.js >= $need (package.json "engines"); the node on PATH is ${have:-missing}${have:+ ($(command -v node))}.
check-node: Node.js 24 (LTS) is one command away: scripts/ensure-node.sh fetches it from the npm registry
check-node: into a cache. Put it first on PATH (add the line to ~/.bashrc to keep it), then run this again:
  export PATH="\$(bash scripts/ensure-node.sh 24):\$PATH"
MSG
exit 1
