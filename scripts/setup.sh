#!/usr/bin/env bash
# One command from a fresh clone to a working warden: engine, dependencies, build, images.
set -euo pipefail
cd "$(dirname "$0")/.."

# Node first: an old one stops here at once, naming the fix (scripts/ensure-node.sh).
bash scripts/check-node.sh
bash scripts/ensure-docker.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
bash scripts/bootstrap-base-image.sh
node bin/warden.js images build
