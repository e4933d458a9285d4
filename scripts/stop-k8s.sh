#!/usr/bin/env bash
# Stop the local test cluster that scripts/ensure-k8s.sh started, leaving no Pod, container, shim,
# mount or network interface of it behind. Only processes the cluster started are stopped (by the
# pids ensure-k8s.sh recorded, and the containerd shims serving its own socket); a cluster reached
# through KUBECONFIG is never touched.
#
# Kept: the built binaries and the Go build cache (the next start is warm), certificates, etcd's data
# (namespaces, ServiceAccounts...) and the images loaded into the cluster's containerd.
# Options: --purge  also remove that state (everything under /var/lib/warden-k8s but bin/ and cache/).
set -euo pipefail

# shellcheck disable=SC2034 # read by k8s_say in k8s/lib.sh
K8S_SCRIPT=stop-k8s
# shellcheck source=k8s/lib.sh
source "$(cd "$(dirname "$0")" && pwd)/k8s/lib.sh"

purge=false
for arg in "$@"; do
  case "$arg" in
  --purge) purge=true ;;
  *) k8s_die "unknown argument '$arg' (known: --purge)" ;;
  esac
done
[ "$(id -u)" = 0 ] || k8s_die "stopping the local cluster needs root"

# Pods first, through the API while the kubelet still runs: it stops their containers, tears their
# network down and unmounts their volumes.
if k8s_pid kube-apiserver >/dev/null && k8s_pid kubelet >/dev/null &&
  k8s_kubectl --request-timeout=5s get --raw /readyz >/dev/null 2>&1; then
  k8s_say "deleting every Pod"
  k8s_kubectl delete pods --all --all-namespaces --grace-period=1 --timeout=90s >/dev/null ||
    k8s_say "some Pods did not go within 90s; their containers are removed below"
fi
for name in kubelet kube-scheduler kube-controller-manager kube-apiserver; do k8s_stop "$name"; done

# Whatever the kubelet left running: kill and delete its tasks and containers (their network
# namespaces live under $K8S_RUN, unmounted below).
if k8s_pid containerd >/dev/null; then
  for id in $(k8s_ctr containers ls -q 2>/dev/null); do
    k8s_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    k8s_ctr tasks delete -f "$id" >/dev/null 2>&1 || true
    k8s_ctr containers delete "$id" >/dev/null 2>&1 || true
  done
fi
k8s_stop containerd
# The shims of this containerd (an exited containerd leaves them to their tasks) by their -address,
# and what gVisor Pods ran: runsc's sandbox and gofer processes (by their runsc root) and the
# runsc-cri holders.
for dir in /proc/[0-9]*; do
  cmd="$(tr '\0' ' ' 2>/dev/null <"$dir/cmdline")" || continue  # a process may end meanwhile: quiet
  case "$cmd" in
  *containerd-shim*"-address $K8S_CONTAINERD_SOCK "* | runsc-*"--root=$K8S_RUN/runsc/"* | *"$K8S_BIN/runsc-cri"*)
    kill -KILL "${dir#/proc/}" 2>/dev/null || true
    ;;
  esac
done
k8s_stop etcd

# Mounts under the cluster's directories (volumes, rootfs overlays, shm), deepest first.
awk -v a="$K8S_STATE/" -v b="$K8S_RUN/" 'index($2, a) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts |
  sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
# The kubelet's cgroups (cgroupfs driver): empty once the containers are gone.
for root in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  if [ -d "$root" ]; then find "$root" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
done
# The pod log symlinks the kubelet made in /var/log/containers for this cluster's Pods.
for link in /var/log/containers/*.log; do
  if [ -L "$link" ]; then case "$(readlink "$link")" in "$K8S_POD_LOGS"/*) rm -f "$link" ;; esac; fi
done
ip link del "$K8S_BRIDGE" 2>/dev/null || true
# The kernel settings as they were before the kubelet changed them.
if [ -f "$K8S_RUN/sysctl.saved" ]; then
  while read -r setting; do sysctl -q -w "$setting" >/dev/null 2>&1 || true; done <"$K8S_RUN/sysctl.saved"
  rm -f "$K8S_RUN/sysctl.saved"
fi

if $purge; then
  k8s_say "removing the cluster's state (keeping $K8S_BIN and $K8S_STATE/cache)"
  find "$K8S_STATE" -mindepth 1 -maxdepth 1 ! -name bin ! -name cache -exec rm -rf {} +
  rm -rf "$K8S_RUN"
fi

left="$(awk -v a="$K8S_STATE/" -v b="$K8S_RUN/" 'index($2, a) == 1 || index($2, b) == 1' /proc/mounts)"
if [ -n "$left" ]; then
  k8s_say "mounts left behind:"
  echo "$left" >&2
  exit 1
fi
k8s_say "stopped"
