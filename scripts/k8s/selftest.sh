#!/usr/bin/env bash
# Self-test of a cluster for warden (scripts/ensure-k8s.sh --selftest): one Pod from
# warden-sandbox:latest with the hardening warden's Kubernetes backend applies (non-root 1000,
# read-only root filesystem, all capabilities dropped, no privilege escalation, seccomp RuntimeDefault,
# no service-account token, CPU/memory/ephemeral-storage limits, size-limited emptyDirs for
# /workspace and /tmp), then: exec into it and check each of those from inside, check it has no route
# (no default route; connects to the internet, to the node and to a second Pod fail), attach to its stdin and read its
# answer. The namespace it makes is deleted on the way out. Exit 1 naming the first check that fails.
#
# Environment: K8S_KUBECONFIG, K8S_KUBECTL (set by ensure-k8s.sh).
set -euo pipefail

kc() { "$K8S_KUBECTL" --kubeconfig "$K8S_KUBECONFIG" "$@"; }
say() { printf 'selftest: %s\n' "$*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

ns="warden-selftest-$$"
pod=sandbox
cleanup() { kc delete namespace "$ns" --wait=true --timeout=90s >/dev/null 2>&1 || true; }
trap cleanup EXIT

kc create namespace "$ns" >/dev/null
for _ in $(seq 1 60); do kc -n "$ns" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.5; done
# pod NAME COMMAND STDIN: the hardened Pod spec, running COMMAND (a JSON list).
pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels:
    app.kubernetes.io/name: warden-selftest
spec:
  automountServiceAccountToken: false
  enableServiceLinks: false
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  securityContext:
    runAsUser: 1000
    runAsGroup: 1000
    runAsNonRoot: true
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: sandbox
      image: warden-sandbox:latest
      imagePullPolicy: Never
      command: $2
      stdin: $3
      stdinOnce: $3
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        privileged: false
        capabilities:
          drop: ["ALL"]
      resources:
        limits: { cpu: 500m, memory: 256Mi, ephemeral-storage: 64Mi }
        requests: { cpu: 50m, memory: 64Mi }
      volumeMounts:
        - { name: workspace, mountPath: /workspace }
        - { name: tmp, mountPath: /tmp }
  volumes:
    - name: workspace
      emptyDir: { sizeLimit: 256Mi }
    - name: tmp
      emptyDir: { medium: Memory, sizeLimit: 64Mi }
EOF
}
pod sandbox '["/bin/bash", "-c", "read -r line; echo \"attached: $line\""]' true | kc -n "$ns" apply -f - >/dev/null
# A second Pod, only there to be unreachable from the first.
pod peer '["sleep", "600"]' false | kc -n "$ns" apply -f - >/dev/null
started="$(date +%s%N)"
kc -n "$ns" wait --for=condition=Ready "pod/$pod" --timeout=120s >/dev/null ||
  fail "the Pod is not Ready: $(kc -n "$ns" describe pod "$pod" | tail -n 15)"
kc -n "$ns" wait --for=condition=Ready pod/peer --timeout=120s >/dev/null || fail "the peer Pod is not Ready"
peer_ip="$(kc -n "$ns" get pod peer -o 'jsonpath={.status.podIP}')"
say "Pod ready in $((($(date +%s%N) - started) / 1000000)) ms"

# Inside: identity, capabilities, no_new_privs, seccomp, read-only root, the emptyDirs, the routes.
out="$(kc -n "$ns" exec "$pod" -c sandbox -- env PEER="$peer_ip" /bin/bash -c '
  echo "uid=$(id -u) gid=$(id -g)"
  grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t " " "
  touch /rootfs-probe 2>/dev/null && echo "root=writable" || echo "root=read-only"
  touch /workspace/probe /tmp/probe && echo "volumes=writable"
  echo "tmp=$(df -k --output=size /tmp | tail -n 1 | tr -d " ")KiB"
  ls /var/run/secrets/kubernetes.io 2>/dev/null && echo "token=mounted" || echo "token=none"
  awk "NR > 1 && \$2 == \"00000000\" { found = 1 } END { print found ? \"default-route=yes\" : \"default-route=none\" }" /proc/net/route
  echo "routes=$(awk "NR > 1 { printf \"%s \", \$1 }" /proc/net/route)"
  (exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 | sed "s/^/internet: /" | head -n 1
  (exec 3<>/dev/tcp/10.89.254.1/10250) 2>&1 | sed "s/^/node: /" | head -n 1
  (timeout 10 bash -c "exec 3<>/dev/tcp/$PEER/80" 2>&1 || echo "exit $?") | sed "s/^/peer: /" | tr "\n" " "
')" || fail "exec into the Pod: $out"
printf '%s\n' "$out" | sed 's/^/selftest:   /' >&2
expect() { printf '%s\n' "$out" | grep -qE "$1" || fail "expected /$1/ in the exec output"; }
expect '^uid=1000 gid=1000$'
expect '^CapEff: 0000000000000000$'
expect '^NoNewPrivs: 1$'
expect '^Seccomp: 2$'
expect '^root=read-only$'
expect '^volumes=writable$'
expect '^tmp=65536KiB$'
expect '^token=none$'
expect '^default-route=none$'
expect '^internet: .*(Network is unreachable|No route to host)'
expect '^node: .*(Network is unreachable|No route to host)'
expect '^peer: .*(No route to host|exit 124)'

# Attach: the Pod's command reads one line from its stdin and answers it, then exits.
answer="$(echo hello | timeout 60 "$K8S_KUBECTL" --kubeconfig "$K8S_KUBECONFIG" -n "$ns" attach -i "$pod" -c sandbox 2>/dev/null)" ||
  fail "attach: $answer"
printf '%s\n' "$answer" | grep -qx 'attached: hello' || fail "attach: expected 'attached: hello', got '$answer'"
say "attach answered 'attached: hello'"
say "ok"
