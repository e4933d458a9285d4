#!/usr/bin/env bash
# Make a Docker engine reachable for warden.
#
# - Engine already answers `docker info`: change nothing, exit 0.
# - Root on Debian: install Debian's docker.io (and runsc for gVisor), start dockerd in the
#   background and wait for its socket (at most WARDEN_DOCKER_WAIT_S seconds, default 60).
# - Anything else: print what to do and exit 1.
set -euo pipefail

wait_s="${WARDEN_DOCKER_WAIT_S:-60}"
log_file="${WARDEN_DOCKERD_LOG:-/var/log/warden-dockerd.log}"

say() { printf 'ensure-docker: %s\n' "$*" >&2; }

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  say "engine reachable; nothing to do"
  exit 0
fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  say "no Docker engine answers 'docker info'."
  say "Install Docker Engine (https://docs.docker.com/engine/install/) and start it,"
  say "or make your user able to reach it (e.g. add it to the 'docker' group), then run this again."
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v runsc >/dev/null 2>&1; then
  say "installing Debian's docker.io and runsc"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io runsc iptables ca-certificates >/dev/null
fi

# Write the engine's configuration only when we own it (it is not running and has no config yet):
# gVisor as a runtime (runsc's default platform works here; --network=none keeps it off the
# network), and address pools cut in /24s. Every session with network egress takes one network,
# and Docker's default pools hold 31 (15 /16s and 16 /20s), so a host could run no more than about
# 30 networked sessions; 172.16.0.0/12 in /24s holds 4,096 (docs/network.md, "Each session takes
# one engine network").
if [ ! -f /etc/docker/daemon.json ]; then
  mkdir -p /etc/docker
  runtimes=""
  if command -v runsc >/dev/null 2>&1; then
    runtimes='"runtimes": { "runsc": { "path": "'"$(command -v runsc)"'", "runtimeArgs": ["--network=none"] } },'
  fi
  cat > /etc/docker/daemon.json <<JSON
{
  ${runtimes}
  "default-address-pools": [{ "base": "172.16.0.0/12", "size": 24 }]
}
JSON
fi

# A live process named $1 (zombies do not count: a killed dockerd whose parent never reaped it
# stays in the process table as <defunct>).
running() { ps -eo stat=,comm= | awk -v name="$1" '$2 == name && $1 !~ /^Z/ { found = 1 } END { exit !found }'; }

if ! running dockerd; then
  # A dockerd that was killed (a CI runner ending the previous session) leaves pid files behind that
  # make the next start refuse; with no dockerd or containerd running they are stale.
  if ! running containerd; then
    rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
  fi
  say "starting dockerd in the background (log: $log_file)"
  nohup dockerd >"$log_file" 2>&1 </dev/null &
fi

for _ in $(seq 1 "$((wait_s * 2))"); do
  if docker info >/dev/null 2>&1; then
    say "engine ready: $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>/dev/null)"
    exit 0
  fi
  sleep 0.5
done

say "dockerd did not answer within ${wait_s}s; last lines of $log_file:"
tail -n 20 "$log_file" >&2 || true
exit 1
