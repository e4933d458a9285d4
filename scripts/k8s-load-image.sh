#!/usr/bin/env bash
# Import a Docker image into the local test cluster's containerd (namespace k8s.io), so that a Pod
# with `image: <ref>` and `imagePullPolicy: Never` runs it (no registry involved).
#
# Usage: scripts/k8s-load-image.sh <docker image ref>     e.g. warden-sandbox:latest
# The cluster (scripts/ensure-k8s.sh) must be running. An image already imported from the same Docker
# image ID is left as it is; exit 1 when Docker has no such image or the cluster is not running.
set -euo pipefail

# shellcheck disable=SC2034 # read by k8s_say in k8s/lib.sh
K8S_SCRIPT=k8s-load-image
# shellcheck source=k8s/lib.sh
source "$(cd "$(dirname "$0")" && pwd)/k8s/lib.sh"

[ "$#" = 1 ] || k8s_die "usage: scripts/k8s-load-image.sh <docker image ref>"
ref="$1"
k8s_ctr version >/dev/null 2>&1 || k8s_die "the cluster's containerd ($K8S_CONTAINERD_SOCK) does not answer; run scripts/ensure-k8s.sh"
id="$(docker image inspect --format '{{.Id}}' "$ref" 2>/dev/null)" ||
  k8s_die "the Docker engine has no image '$ref' (docker images lists what it has)"

# The name Kubernetes resolves `image: <ref>` to: docker.io/library/ for a bare name, docker.io/ for
# a path whose first part is no host, :latest when no tag or digest is given.
name="$ref"
first="${name%%/*}"
if [ "$first" = "$name" ]; then
  name="docker.io/library/$name"
elif [[ "$first" != *.* && "$first" != *:* && "$first" != localhost ]]; then
  name="docker.io/$name"
fi
last="${name##*/}"
if [[ "$last" != *:* && "$last" != *@* ]]; then name="$name:latest"; fi

label="warden.docker-image-id=$id"
if k8s_ctr images ls "name==$name" | grep -qF "$label"; then
  k8s_say "$name is loaded already ($id)"
  exit 0
fi
k8s_say "loading $ref into the cluster as $name"
# An import can fail once on a snapshot containerd's garbage collector removed meanwhile ("parent
# snapshot … does not exist", seen after a cluster restart): a second import of the same layers
# succeeds, so one retry; a second failure is reported.
if ! docker save "$ref" | k8s_ctr images import - >/dev/null; then
  k8s_say "import of $ref failed; retrying once"
  docker save "$ref" | k8s_ctr images import - >/dev/null
fi
k8s_ctr images label "$name" "$label" >/dev/null
