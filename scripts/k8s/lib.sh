# shellcheck shell=bash disable=SC2034 # the variables are read by the scripts that source this
# Shared by scripts/ensure-k8s.sh, scripts/stop-k8s.sh and scripts/k8s-load-image.sh (sourced, not run):
# the local test cluster's paths, addresses and process helpers. Bash, root, Debian 12/13.
#
# Layout (the contract with the Kubernetes backend's tests: state dir and admin kubeconfig path):
#   $K8S_STATE/admin.kubeconfig    cluster-admin credentials (client certificate, server 127.0.0.1)
#   $K8S_STATE/bin/                kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#                                  kubectl, pause (built from scripts/k8s/build and scripts/k8s/pause)
#   $K8S_STATE/cache/go-build      the Go build cache of those builds (kept between runs)
#   $K8S_STATE/pki/, etc/          certificates and keys (openssl), component configs and kubeconfigs
#   $K8S_STATE/etcd/, containerd/, kubelet/, pod-logs/   the components' data
#   $K8S_STATE/log/<name>.log      each daemon's output
#   $K8S_RUN/                      pid files, containerd's socket and state (tmpfs on most machines)

K8S_STATE=/var/lib/warden-k8s
K8S_RUN=/run/warden-k8s
K8S_BIN="$K8S_STATE/bin"
K8S_PKI="$K8S_STATE/pki"
K8S_ETC="$K8S_STATE/etc"
K8S_LOG="$K8S_STATE/log"
K8S_ADMIN_KUBECONFIG="$K8S_STATE/admin.kubeconfig"
K8S_CONTAINERD_SOCK="$K8S_RUN/containerd.sock"
K8S_KUBELET_ROOT="$K8S_STATE/kubelet"
K8S_POD_LOGS="$K8S_STATE/pod-logs"

# Kubernetes release the components are built from: the last minor that still runs on cgroup v1 by
# default and with containerd 1.6/1.7 (1.35 refuses both unless told otherwise).
K8S_VERSION=v1.34.4
K8S_NODE=warden-node
# A host-only bridge with no uplink: the node's address (the kubelet listens there; the apiserver
# reaches it there) and the master of the Pods' macvlan interfaces (private mode: Pods reach neither
# each other nor the host, and they get no route out).
K8S_BRIDGE=wk8s0
K8S_NODE_IP=10.89.254.1
K8S_POD_SUBNET=10.89.0.0/22
K8S_SERVICE_CIDR=10.96.0.0/24
K8S_SERVICE_IP=10.96.0.1
K8S_APISERVER_PORT=6443
K8S_ETCD_PORT=23790
K8S_ETCD_PEER_PORT=23800
K8S_PAUSE_IMAGE=docker.io/library/warden-k8s-pause:1
# The kernel settings the kubelet sets on start (it cannot be told not to, only to fail instead):
# ensure-k8s.sh saves their values first in $K8S_RUN/sysctl.saved, stop-k8s.sh puts them back.
K8S_KUBELET_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

k8s_say() { printf '%s: %s\n' "${K8S_SCRIPT:-k8s}" "$*" >&2; }
k8s_die() {
  k8s_say "$*"
  exit 1
}

# k8s_pid NAME: the pid of the daemon this cluster started as NAME, when it still runs the binary
# it was started from (a stale pid file after a reboot, or a reused pid, does not count).
k8s_pid() {
  local file="$K8S_RUN/$1.pid" pid exe want
  [ -f "$file" ] || return 1
  pid="$(cat "$file")"
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
  want="$(cat "$file.exe" 2>/dev/null)" || return 1
  [ "$exe" = "$want" ] || return 1
  printf '%s\n' "$pid"
}

# k8s_start NAME BINARY ARGS...: start BINARY in the background in its own session, output to
# $K8S_LOG/NAME.log, unless NAME already runs.
k8s_start() {
  local name="$1" bin="$2"
  shift 2
  if k8s_pid "$name" >/dev/null; then return 0; fi
  mkdir -p "$K8S_LOG" "$K8S_RUN"
  k8s_say "starting $name (log: $K8S_LOG/$name.log)"
  setsid nohup "$bin" "$@" >>"$K8S_LOG/$name.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$K8S_RUN/$name.pid"
  readlink -f "$bin" >"$K8S_RUN/$name.pid.exe"
}

# k8s_stop NAME: SIGTERM the daemon NAME, SIGKILL it after 20 s, forget its pid file.
k8s_stop() {
  local name="$1" pid
  if pid="$(k8s_pid "$name")"; then
    k8s_say "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      [ -d "/proc/$pid" ] || break
      sleep 0.2
    done
    if [ -d "/proc/$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$K8S_RUN/$name.pid" "$K8S_RUN/$name.pid.exe"
}

# k8s_wait SECONDS WHAT COMMAND...: retry COMMAND every half second until it succeeds; fail naming
# WHAT after SECONDS.
k8s_wait() {
  local seconds="$1" what="$2"
  shift 2
  for _ in $(seq 1 "$((seconds * 2))"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  k8s_say "$what not ready after ${seconds}s"
  return 1
}

k8s_kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$K8S_ADMIN_KUBECONFIG" "$@"; }
k8s_ctr() { ctr --address "$K8S_CONTAINERD_SOCK" --namespace k8s.io "$@"; }
