#!/usr/bin/env bash
# Make the base image the Dockerfiles build FROM available without a registry.
#
# Usage: bootstrap-base-image.sh [IMAGE]   (default: the FROM of images/sandbox/Dockerfile)
# - Present locally: nothing to do.
# - Pullable: pull it.
# - Otherwise (no registry, as on warden's CI): build it from Debian's packages with
#   `debootstrap --variant=minbase bookworm` and `docker import` it under the same name.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
image="${1:-$(awk 'toupper($1)=="FROM"{print $2; exit}' "$here/images/sandbox/Dockerfile")}"
suite="${WARDEN_BASE_SUITE:-bookworm}"
say() { printf 'bootstrap-base-image: %s\n' "$*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
  say "$image is present"
  exit 0
fi

say "trying to pull $image"
if timeout "${WARDEN_PULL_TIMEOUT_S:-30}" docker pull -q "$image" >/dev/null 2>&1; then
  say "pulled $image"
  exit 0
fi

# The mirror apt already uses on this machine (deb822 or one-line sources), else Debian's default.
mirror="$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | head -n1 | tr -d ' ')" || true
mirror="${WARDEN_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}"

if ! command -v debootstrap >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    say "cannot pull $image and debootstrap is missing; install it (apt-get install debootstrap) and run again"
    exit 1
  fi
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

root="$(mktemp -d /tmp/warden-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
say "building $image with debootstrap --variant=minbase $suite from $mirror (takes a few minutes)"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
  tail -n 30 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
# Keep the image small, as the slim images are.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$image" >/dev/null
say "imported $image"
