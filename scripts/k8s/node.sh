# shellcheck shell=bash disable=SC2030,SC2031 # the build subshells export on purpose
# The node side of the local test cluster (sourced by scripts/ensure-k8s.sh after lib.sh): the
# Kubernetes binaries' build, the host-only network, and the configurations of the second containerd
# and of the kubelet. Every function is idempotent.

K8S_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# node_build_stamp: what the built binaries depend on (the build module, the Go toolchain, the flags);
# a change rebuilds them.
node_build_stamp() {
  {
    cat "$K8S_SRC/build/go.mod" "$K8S_SRC/build/go.sum" "$K8S_SRC/pause/main.go"
    go version
    echo "$K8S_VERSION"
  } | sha256sum | cut -d' ' -f1
}

# node_build: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kubectl from
# k8s.io/kubernetes at $K8S_VERSION (scripts/k8s/build/go.mod pins it and its staging modules), and
# the pause binary; skipped when $K8S_BIN holds a build with the same stamp. The Go build cache stays
# in $K8S_STATE/cache/go-build, so a rebuild after a change recompiles only what changed.
node_build() {
  command -v go >/dev/null 2>&1 || k8s_die "Go is needed to build Kubernetes $K8S_VERSION (go >= 1.24: https://go.dev/dl/)"
  local stamp minor
  minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
  [ "$minor" -ge 24 ] 2>/dev/null || k8s_die "Kubernetes $K8S_VERSION needs go >= 1.24; found $(go env GOVERSION)"
  stamp="$(node_build_stamp)"
  if [ "$(cat "$K8S_BIN/.stamp" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  mkdir -p "$K8S_BIN" "$K8S_STATE/cache/go-build"
  local ldflags="-s -w" pkg started
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=34"
    ldflags="$ldflags -X $pkg.gitTreeState=clean"
  done
  started="$(date +%s)"
  k8s_say "building Kubernetes $K8S_VERSION (minutes on a cold cache; log: $K8S_LOG/build.log)"
  mkdir -p "$K8S_LOG"
  (
    cd "$K8S_SRC/build"
    export GOCACHE="$K8S_STATE/cache/go-build" GOFLAGS=-mod=readonly CGO_ENABLED=0
    nice -n 10 go build -trimpath -ldflags="$ldflags" -o "$K8S_BIN/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl
    cd "$K8S_SRC/pause"
    nice -n 10 go build -trimpath -ldflags="-s -w" -o "$K8S_BIN/pause" .
  ) >>"$K8S_LOG/build.log" 2>&1 || {
    tail -n 30 "$K8S_LOG/build.log" >&2
    k8s_die "the build failed (log: $K8S_LOG/build.log)"
  }
  echo "$stamp" >"$K8S_BIN/.stamp"
  k8s_say "built in $(($(date +%s) - started))s"
}

# node_runsc_stamp: what the built runsc depends on (scripts/k8s/gvisor's module, the Go toolchain,
# the flags); a change builds a new one.
node_runsc_stamp() {
  {
    cat "$K8S_SRC/gvisor/go.mod" "$K8S_SRC/gvisor/go.sum"
    go version
    echo "-trimpath -s -w CGO_ENABLED=0"
  } | sha256sum | cut -d' ' -f1
}

# node_runsc_build: gVisor's runsc from gvisor.dev/gvisor at the version scripts/k8s/gvisor/go.mod
# pins (Debian 12's runsc 20221219 lets a command open a non-dumpable process's /proc/<pid>/fd:
# README, Known limits), stamped with that version (`runsc --version`). Built once per stamp as
# $K8S_BIN/runsc-<stamp>, never overwritten: gVisor Pods started before a new pin carry on with the
# runsc they started with (their wrapper names it). $K8S_BIN/runsc links to the newest. Prints the
# binary's path. The Go build cache is the Kubernetes build's ($K8S_STATE/cache/go-build).
node_runsc_build() {
  command -v go >/dev/null 2>&1 || k8s_die "Go is needed to build gVisor's runsc (https://go.dev/dl/), or set WARDEN_K8S_GVISOR=0"
  local dir="$K8S_SRC/gvisor" version need have toolchain stamp bin started said
  version="$(awk '$1 == "gvisor.dev/gvisor" { print $2 }' "$dir/go.mod")"
  need="$(awk '$1 == "go" { print $2 }' "$dir/go.mod")"
  have="$(go env GOVERSION)"
  have="${have#go}"
  # An older Go (Debian 13's 1.24) fetches go $need from the module proxy (GOTOOLCHAIN=auto, also
  # where go.env says local), unless GOTOOLCHAIN=local is set in the environment.
  toolchain="${GOTOOLCHAIN:-auto}"
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ] && [ "$toolchain" = local ]; then
    k8s_die "gVisor's runsc $version needs go >= $need (found $have, GOTOOLCHAIN=local): install it, unset GOTOOLCHAIN, or set WARDEN_K8S_GVISOR=0"
  fi
  stamp="$(node_runsc_stamp)"
  bin="$K8S_BIN/runsc-${stamp:0:12}"
  if [ ! -x "$bin" ]; then
    mkdir -p "$K8S_BIN" "$K8S_STATE/cache/go-build" "$K8S_LOG"
    started="$(date +%s)"
    k8s_say "building gVisor's runsc $version (minutes on a cold cache; log: $K8S_LOG/build-runsc.log)"
    (
      cd "$dir"
      export GOCACHE="$K8S_STATE/cache/go-build" GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN="$toolchain"
      nice -n 10 go build -trimpath -ldflags="-s -w -X gvisor.dev/gvisor/runsc/version.version=$version" \
        -o "$bin.new" gvisor.dev/gvisor/runsc
    ) >>"$K8S_LOG/build-runsc.log" 2>&1 || {
      tail -n 30 "$K8S_LOG/build-runsc.log" >&2
      k8s_die "building runsc failed (log: $K8S_LOG/build-runsc.log); WARDEN_K8S_GVISOR=0 leaves gVisor out"
    }
    mv "$bin.new" "$bin"
    k8s_say "built runsc in $(($(date +%s) - started))s"
  fi
  said="$("$bin" --version 2>/dev/null)" || true
  [ "${said%%$'\n'*}" = "runsc version $version" ] ||
    k8s_die "$bin does not say it is runsc $version; remove it and run again"
  ln -sfn "${bin##*/}" "$K8S_BIN/runsc"
  printf '%s\n' "$bin"
}

# node_gvisor_runsc: the runsc binary of RuntimeClass gvisor (node_runsc_build's; WARDEN_K8S_RUNSC
# names another), printed; exits naming the fault when there is none.
node_gvisor_runsc() {
  if [ -n "${WARDEN_K8S_RUNSC:-}" ]; then
    [ -x "$WARDEN_K8S_RUNSC" ] || k8s_die "WARDEN_K8S_RUNSC=$WARDEN_K8S_RUNSC is not an executable runsc"
    printf '%s\n' "$WARDEN_K8S_RUNSC"
    return 0
  fi
  node_runsc_build
}

# node_gvisor_wrapper: the "runc binary" that containerd's runc shim runs for the handler runsc
# (scripts/k8s/runsc-cri.sh, which says why it exists), as dockerd does for its runsc runtime: runsc
# with --network=none and its default platform. Through containerd's own shim, not gVisor's
# containerd-shim-runsc-v1, which sets its OOM score to -999 and so fails every Pod where root lacks
# CAP_SYS_RESOURCE. Installed as $K8S_BIN/runsc-cri-<hash of its content>, a new file whenever the
# content changes (another runsc, a changed runsc-cri.sh), never overwritten: a Pod's shim keeps the
# wrapper it started with, so Pods started before a change carry on with their runsc while the
# containerd config (node_containerd_runsc) names the new one for new Pods. Sets K8S_RUNSC_CRI to
# its path; empty with WARDEN_K8S_GVISOR=0 (no gVisor). Exits when runsc cannot be had.
K8S_RUNSC_CRI=""
node_gvisor_wrapper() {
  [ "${WARDEN_K8S_GVISOR:-1}" != 0 ] || return 0
  local runsc text
  runsc="$(node_gvisor_runsc)" || exit 1
  text="$(sed -e "s|@RUNSC@|$runsc|" -e "s|@HOLD@|$K8S_RUN/runsc-stdio|" "$K8S_SRC/runsc-cri.sh")"
  K8S_RUNSC_CRI="$K8S_BIN/runsc-cri-$(printf '%s\n' "$text" | sha256sum | cut -c1-12)"
  [ -x "$K8S_RUNSC_CRI" ] && return 0
  mkdir -p "$K8S_BIN"
  printf '%s\n' "$text" >"$K8S_RUNSC_CRI.new"
  chmod 755 "$K8S_RUNSC_CRI.new"
  mv "$K8S_RUNSC_CRI.new" "$K8S_RUNSC_CRI"
}

# node_gvisor_works: whether a container runs through the handler runsc on this node's containerd
# (the pause image, through containerd's runc shim and runsc-cri, as a Pod would); removed after.
node_gvisor_works() {
  [ -n "$K8S_RUNSC_CRI" ] && [ -x "$K8S_RUNSC_CRI" ] || return 1
  local id="warden-gvisor-probe-$$" ok=1
  if k8s_ctr run -d --runtime io.containerd.runc.v2 --runc-binary "$K8S_RUNSC_CRI" \
    --runc-root "$K8S_RUN/runsc" "$K8S_PAUSE_IMAGE" "$id" >/dev/null 2>>"$K8S_LOG/gvisor-probe.log"; then
    sleep 0.5
    k8s_ctr tasks ls | awk -v id="$id" '$1 == id && $3 == "RUNNING" { found = 1 } END { exit !found }' && ok=0
  fi
  k8s_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  for _ in $(seq 1 20); do k8s_ctr tasks delete "$id" >/dev/null 2>&1 && break; sleep 0.25; done
  k8s_ctr containers delete "$id" >/dev/null 2>&1 || true
  return "$ok"
}

# node_network: the host-only bridge that carries the node's address and the Pods' interfaces.
node_network() {
  ip link show "$K8S_BRIDGE" >/dev/null 2>&1 || ip link add "$K8S_BRIDGE" type bridge
  ip -4 addr show dev "$K8S_BRIDGE" | grep -q "inet $K8S_NODE_IP/" ||
    ip addr add "$K8S_NODE_IP/32" dev "$K8S_BRIDGE"
  ip link set "$K8S_BRIDGE" up
  mkdir -p "$K8S_ETC/cni" "$K8S_STATE/cni"
  # Only a macvlan interface in private mode on the uplink-less bridge, with an address and no
  # route: the CRI plugin needs an address on eth0; the Pod reaches nothing through it.
  cat >"$K8S_ETC/cni/10-warden-none.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "warden-none",
  "plugins": [
    {
      "type": "macvlan",
      "master": "$K8S_BRIDGE",
      "mode": "private",
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$K8S_POD_SUBNET" }]],
        "dataDir": "$K8S_STATE/cni/ipam"
      }
    }
  ]
}
EOF
}

# node_containerd_config: a containerd of its own (root, state, socket), so that the Docker engine's
# containerd and its configuration stay untouched; the CRI plugin on, runc with cgroupfs, the
# locally built pause image as the sandbox image. The CRI streaming server closes an exec/attach
# stream idle for WARDEN_K8S_STREAM_IDLE_TIMEOUT (a Go duration, default 90s: containerd's own
# default is 4h), so that test/k8s/stream-idle.test.ts proves the channel heartbeat (60 s by default)
# against containerd's real cut in about a minute and a half.
node_containerd_config() {
  local idle="${WARDEN_K8S_STREAM_IDLE_TIMEOUT:-90s}"
  [[ "$idle" =~ ^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$ ]] ||
    k8s_die "WARDEN_K8S_STREAM_IDLE_TIMEOUT=$idle is not a Go duration (e.g. 90s, 4h0m0s)"
  mkdir -p "$K8S_STATE/containerd" "$K8S_RUN"
  chmod 700 "$K8S_RUN"
  cat >"$K8S_ETC/containerd.toml" <<EOF
version = 2
root = "$K8S_STATE/containerd/root"
state = "$K8S_RUN/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$K8S_CONTAINERD_SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$K8S_STATE/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$K8S_PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  stream_idle_timeout = "$idle"
  enable_selinux = false
  # No lower OOM score than containerd's own: without CAP_SYS_RESOURCE (a container or VM sandbox,
  # as on the machine this was written on) runc cannot lower it, and the pause container fails.
  restrict_oom_score_adj = true
  # Pods' network namespaces under this containerd's state dir, not in the host's /var/run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
$(node_containerd_runsc)
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$K8S_ETC/cni"
EOF
}

# node_containerd_runsc: the runsc handler's section of the containerd config (RuntimeClass
# gvisor): containerd's runc shim with node_gvisor_wrapper's runsc-cri as its runc binary and
# runsc's own state dir.
node_containerd_runsc() {
  [ -n "$K8S_RUNSC_CRI" ] || return 0
  cat <<EOF
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        BinaryName = "$K8S_RUNSC_CRI"
        Root = "$K8S_RUN/runsc"
        SystemdCgroup = false
EOF
}

# node_kubelet_config: the kubelet's configuration. Authenticated and authorized API only (client
# certificates from the cluster CA or tokens checked by the apiserver), listening on the node's
# host-only address; cgroupfs (cgroup v1 here); no swap check; pods' PIDs capped at
# WARDEN_K8S_POD_PIDS_LIMIT (default 256, warden's sandbox default: Kubernetes has no per-container
# PIDs limit); image GC off, so that images loaded with k8s-load-image.sh stay.
node_kubelet_config() {
  mkdir -p "$K8S_KUBELET_ROOT" "$K8S_POD_LOGS"
  cat >"$K8S_ETC/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $K8S_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10258
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $K8S_PKI/ca.crt
authorization:
  mode: Webhook
tlsCertFile: $K8S_PKI/kubelet-server.crt
tlsPrivateKeyFile: $K8S_PKI/kubelet-server.key
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$K8S_CONTAINERD_SOCK
failSwapOn: false
failCgroupV1: false
podLogsDir: $K8S_POD_LOGS
clusterDomain: cluster.local
resolvConf: ""
maxPods: 250
podPidsLimit: ${WARDEN_K8S_POD_PIDS_LIMIT:-256}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
rotateCertificates: false
serverTLSBootstrap: false
EOF
}
