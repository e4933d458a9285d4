#!/usr/bin/env bash
# Make a Kubernetes cluster reachable for warden's Kubernetes backend and its tests.
#
# - KUBECONFIG names another cluster that answers: change nothing, print KUBECONFIG=<it>, exit 0.
# - Otherwise (root on Debian 12/13): a real single-node cluster on this machine, in the background:
#   Debian's etcd-server, a second containerd (own config, root, state and socket; the Docker
#   engine's containerd is untouched) with the CRI plugin, runc, gVisor's runsc as handler runsc of
#   RuntimeClass gvisor, and a CNI config that gives Pods an address but no route; kube-apiserver
#   (127.0.0.1 only), kube-controller-manager, kube-scheduler, kubelet and kubectl built from
#   k8s.io/kubernetes (scripts/k8s/build) and runsc built from gvisor.dev/gvisor (scripts/k8s/gvisor;
#   not Debian's runsc 20221219, which lets a command open the channel helper's fds), both cached in
#   /var/lib/warden-k8s; a locally built pause image. Certificates by openssl; RBAC and Node
#   authorization. Components already running are left alone, so a second run changes nothing
#   (but a containerd whose config changed is restarted, e.g. for a new runsc; running Pods carry on,
#   gVisor ones with the runsc they started with).
#   warden-sandbox:latest is loaded into the cluster when the Docker engine has it.
# - Ready means the node reports Ready. The last line on success is KUBECONFIG=<admin kubeconfig>.
#
# Options: --selftest  also run scripts/k8s/selftest.sh (a hardened Pod from warden-sandbox:latest:
#                      attach, exec, no route) after the cluster is ready.
# Environment: WARDEN_K8S_WAIT_S (default 120) bounds each wait; WARDEN_K8S_POD_PIDS_LIMIT (256);
# WARDEN_K8S_STREAM_IDLE_TIMEOUT (90s; a Go duration) is containerd's CRI stream_idle_timeout;
# WARDEN_K8S_GVISOR=0 skips gVisor (and the runsc build); WARDEN_K8S_RUNSC names another runsc than
# the one built (no build then). RuntimeClass gvisor is made only when a container runs through the
# handler runsc (node_gvisor_works).
# Stop with scripts/stop-k8s.sh. Times and details: README, "Kubernetes cluster for tests".
set -euo pipefail

# shellcheck disable=SC2034 # read by k8s_say in k8s/lib.sh
K8S_SCRIPT=ensure-k8s
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=k8s/lib.sh
source "$here/k8s/lib.sh"
# shellcheck source=k8s/pki.sh
source "$here/k8s/pki.sh"
# shellcheck source=k8s/node.sh
source "$here/k8s/node.sh"

wait_s="${WARDEN_K8S_WAIT_S:-120}"
selftest=false
for arg in "$@"; do
  case "$arg" in
  --selftest) selftest=true ;;
  *) k8s_die "unknown argument '$arg' (known: --selftest)" ;;
  esac
done

# A cluster named by KUBECONFIG (other than ours) that answers is used as it is.
if [ -n "${KUBECONFIG:-}" ] && [ "$KUBECONFIG" != "$K8S_ADMIN_KUBECONFIG" ]; then
  kubectl_bin="$(command -v kubectl || true)"
  [ -x "$K8S_BIN/kubectl" ] && kubectl_bin="$K8S_BIN/kubectl"
  [ -n "$kubectl_bin" ] || k8s_die "KUBECONFIG is set but no kubectl is installed to check it; install kubectl or unset KUBECONFIG"
  if "$kubectl_bin" --request-timeout=10s get --raw /readyz >/dev/null 2>&1; then
    k8s_say "the cluster of KUBECONFIG answers; nothing to do"
    if $selftest; then K8S_KUBECONFIG="$KUBECONFIG" K8S_KUBECTL="$kubectl_bin" bash "$here/k8s/selftest.sh"; fi
    echo "KUBECONFIG=$KUBECONFIG"
    exit 0
  fi
  k8s_die "KUBECONFIG=$KUBECONFIG does not answer; fix it, or unset KUBECONFIG to start the local cluster"
fi

[ "$(id -u)" = 0 ] || k8s_die "the local cluster needs root (containerd, kubelet, mounts); run as root or set KUBECONFIG"
[ -f /etc/debian_version ] || k8s_die "the local cluster is scripted for Debian 12/13; elsewhere set KUBECONFIG to a cluster"

# Debian's packages for the parts that are packaged.
missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/macvlan ] || missing+=(containernetworking-plugins)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ "${#missing[@]}" -gt 0 ]; then
  k8s_say "installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
docker info >/dev/null 2>&1 ||
  k8s_die "the Docker engine is needed to build the pause image and load warden-sandbox; run scripts/ensure-docker.sh first"

started="$(date +%s)"
mkdir -p "$K8S_STATE" "$K8S_LOG" "$K8S_RUN"
chmod 700 "$K8S_STATE"
node_build
node_gvisor_wrapper
pki_ensure
node_network
node_containerd_config
node_kubelet_config

etcd_url="https://127.0.0.1:$K8S_ETCD_PORT"
k8s_start etcd "$(command -v etcd)" --name warden --data-dir "$K8S_STATE/etcd" \
  --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
  --listen-peer-urls "http://127.0.0.1:$K8S_ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$K8S_ETCD_PEER_PORT" \
  --initial-cluster "warden=http://127.0.0.1:$K8S_ETCD_PEER_PORT" \
  --cert-file "$K8S_PKI/etcd-server.crt" --key-file "$K8S_PKI/etcd-server.key" \
  --client-cert-auth --trusted-ca-file "$K8S_PKI/ca.crt"

# A containerd that runs with another config (an older checkout's) is restarted to load this one;
# running Pods carry on meanwhile (their shims are processes of their own).
if k8s_pid containerd >/dev/null && ! cmp -s "$K8S_ETC/containerd.toml" "$K8S_RUN/containerd.toml.loaded"; then
  k8s_say "containerd's config changed; restarting it"
  k8s_stop containerd
fi
k8s_start containerd "$(command -v containerd)" --config "$K8S_ETC/containerd.toml"
cp "$K8S_ETC/containerd.toml" "$K8S_RUN/containerd.toml.loaded"
k8s_wait "$wait_s" containerd k8s_ctr version

# The pause image: a static binary in a one-layer image, imported once.
if ! k8s_ctr images ls -q | grep -qx "$K8S_PAUSE_IMAGE"; then
  ctx="$(mktemp -d)"
  cp "$K8S_BIN/pause" "$ctx/pause"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Dockerfile"
  out="$(docker build -q -t "${K8S_PAUSE_IMAGE#docker.io/library/}" "$ctx" 2>&1)" ||
    k8s_die "building the pause image failed: $out"
  rm -rf "$ctx"
  bash "$here/k8s-load-image.sh" "${K8S_PAUSE_IMAGE#docker.io/library/}"
fi
if docker image inspect warden-sandbox:latest >/dev/null 2>&1; then
  bash "$here/k8s-load-image.sh" warden-sandbox:latest
else
  k8s_say "the Docker engine has no warden-sandbox:latest (npm run setup builds it); not loaded"
fi

k8s_start kube-apiserver "$K8S_BIN/kube-apiserver" \
  --bind-address=127.0.0.1 --secure-port="$K8S_APISERVER_PORT" --advertise-address="$K8S_NODE_IP" \
  --etcd-servers="$etcd_url" --etcd-cafile="$K8S_PKI/ca.crt" \
  --etcd-certfile="$K8S_PKI/apiserver-etcd-client.crt" --etcd-keyfile="$K8S_PKI/apiserver-etcd-client.key" \
  --client-ca-file="$K8S_PKI/ca.crt" --tls-cert-file="$K8S_PKI/apiserver.crt" \
  --tls-private-key-file="$K8S_PKI/apiserver.key" \
  --kubelet-client-certificate="$K8S_PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$K8S_PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$K8S_PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$K8S_PKI/service-account.pub" \
  --service-account-signing-key-file="$K8S_PKI/service-account.key" \
  --service-cluster-ip-range="$K8S_SERVICE_CIDR" --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NodeRestriction --allow-privileged=false --anonymous-auth=false \
  --profiling=false
k8s_wait "$wait_s" kube-apiserver k8s_kubectl --request-timeout=5s get --raw /readyz

k8s_start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
  --kubeconfig="$K8S_ETC/controller-manager.kubeconfig" --secure-port=0 --leader-elect=false \
  --service-account-private-key-file="$K8S_PKI/service-account.key" --root-ca-file="$K8S_PKI/ca.crt" \
  --use-service-account-credentials=true --cluster-signing-cert-file="$K8S_PKI/ca.crt" \
  --cluster-signing-key-file="$K8S_PKI/ca.key" --allocate-node-cidrs=false --profiling=false
k8s_start kube-scheduler "$K8S_BIN/kube-scheduler" \
  --kubeconfig="$K8S_ETC/scheduler.kubeconfig" --secure-port=0 --leader-elect=false --profiling=false
if ! k8s_pid kubelet >/dev/null && [ ! -f "$K8S_RUN/sysctl.saved" ]; then
  # shellcheck disable=SC2086
  sysctl $K8S_KUBELET_SYSCTLS 2>/dev/null | sed 's/ = /=/' >"$K8S_RUN/sysctl.saved" || true
fi
# A kubelet started now must report Ready itself: the node's status in etcd may be a stale Ready
# from before a stop.
k8s_pid kubelet >/dev/null || fresh_since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
k8s_start kubelet "$K8S_BIN/kubelet" --config="$K8S_ETC/kubelet.yaml" \
  --kubeconfig="$K8S_ETC/kubelet.kubeconfig" --hostname-override="$K8S_NODE" --node-ip="$K8S_NODE_IP" \
  --root-dir="$K8S_KUBELET_ROOT"

node_ready() {
  local ready
  ready="$(k8s_kubectl get node "$K8S_NODE" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}')"
  [ "${ready% *}" = True ] && [[ ! "${ready#* }" < "${fresh_since:-}" ]]
}
k8s_wait "$wait_s" "node $K8S_NODE" node_ready || {
  tail -n 20 "$K8S_LOG/kubelet.log" >&2
  exit 1
}
if node_gvisor_works; then
  k8s_kubectl apply -f - >/dev/null <<EOF
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
EOF
else
  k8s_kubectl delete runtimeclass gvisor --ignore-not-found >/dev/null
fi
# Pods need their namespace's default ServiceAccount (the controller manager makes it).
k8s_wait "$wait_s" "the default ServiceAccount" k8s_kubectl -n default get serviceaccount default
k8s_say "cluster ready in $(($(date +%s) - started))s ($K8S_VERSION, node $K8S_NODE; stop: scripts/stop-k8s.sh)"

if $selftest; then K8S_KUBECONFIG="$K8S_ADMIN_KUBECONFIG" K8S_KUBECTL="$K8S_BIN/kubectl" bash "$here/k8s/selftest.sh"; fi
echo "KUBECONFIG=$K8S_ADMIN_KUBECONFIG"
