#!/bin/bash
# The "runc binary" of the local test cluster's runtime handler runsc (RuntimeClass gvisor):
# containerd's runc shim (io.containerd.runc.v2) runs it as it would run runc, and it runs gVisor's
# runsc with --network=none (Pods here get no route anyway). scripts/ensure-k8s.sh installs it as
# /var/lib/warden-k8s/bin/runsc-cri-<hash of its content> with the two paths below filled in (the
# runsc it builds from gvisor.dev/gvisor, scripts/k8s/gvisor; see node_gvisor_wrapper in node.sh).
#
# Why not gVisor's own shim (containerd-shim-runsc-v1): it sets its OOM score to -999 and so fails
# every Pod where root lacks CAP_SYS_RESOURCE. Why more than `exec runsc`: runsc puts a Pod's
# containers into the pause container's sandbox (the CRI annotations), and it gives such a
# container the stdio of `runsc start`, not of `runsc create` as runc does. The shim hands the
# container's pipes to `create` and reads the output of `start` until EOF, so a plain wrapper
# leaves the container without stdin/stdout and the shim's Start waiting forever. And runsc names
# the sandbox's process as such a container's pid, so the shim, which learns of an exit by reaping
# that pid, would see the container run until the whole Pod ends. So at `create` of a Pod's
# container (io.kubernetes.cri.container-type "container") a holder process keeps create's stdio
# (the container's pipes) open and becomes the container's pid (the --pid-file); `start` runs runsc
# with the holder's stdio and then signals it; the holder drops the stdio, waits for the container
# (`runsc wait`) and exits with its exit status. `delete` ends a holder that no `start` used;
# `kill` words runsc's "is not running" as runc would.
RUNSC=@RUNSC@
HOLD=@HOLD@
# No network inside the sandbox.
FLAGS=(--network=none)

id=""
bundle=""
pid_file=""
cmd=""
globals=()
prev=""
for arg; do
  case "$prev" in
  --bundle | -bundle | -b) bundle="$arg" ;;
  --pid-file | -pid-file) pid_file="$arg" ;;
  esac
  if [ -z "$cmd" ]; then
    case "$arg" in create | start | kill | delete) cmd="$arg" ;; *) globals+=("$arg") ;; esac
  fi
  prev="$arg"
  id="$arg"
done
runsc() { "$RUNSC" "${FLAGS[@]}" "$@"; }

# hold ID: the holder of a created container (see above), in the background.
hold() {
  (
    trap : USR1
    trap 'kill "$sleeper" 2>/dev/null; exit 143' TERM
    # Only stdio stays open in the holder: no other descriptor of the shim's.
    for fd in /proc/"$BASHPID"/fd/*; do
      fd="${fd##*/}"
      [ "$fd" -le 2 ] || exec {fd}>&-
    done
    # shellcheck disable=SC2217 # not to hold the container's stdin
    sleep 3600 </dev/null >/dev/null 2>&1 &
    sleeper="$!"
    wait "$sleeper"
    kill "$sleeper" 2>/dev/null
    exec </dev/null >/dev/null 2>&1
    out="$(runsc "${globals[@]}" wait "$1")"
    [[ "$out" =~ \"exitStatus\":([0-9]+) ]] && exit "${BASH_REMATCH[1]}"
    exit 255
  ) <&3 &
}

case "$cmd" in
create)
  if [ -n "$bundle" ] && [ -n "$pid_file" ] &&
    grep -q '"io.kubernetes.cri.container-type": *"container"' "$bundle/config.json" 2>/dev/null; then
    mkdir -p "$HOLD"
    exec 3<&0
    hold "$id"
    holder="$!"
    exec 3<&-
    status=0
    runsc "$@" || status=$?
    if [ "$status" != 0 ]; then
      kill "$holder" 2>/dev/null
      exit "$status"
    fi
    echo "$holder" >"$HOLD/$id.pid"
    printf %s "$holder" >"$pid_file"
    exit 0
  fi
  ;;
start)
  if holder="$(cat "$HOLD/$id.pid" 2>/dev/null)" && [ -e "/proc/$holder/fd/1" ]; then
    rm -f "$HOLD/$id.pid"
    status=0
    runsc "$@" <"/proc/$holder/fd/0" >"/proc/$holder/fd/1" 2>"/proc/$holder/fd/2" || status=$?
    kill -USR1 "$holder" 2>/dev/null
    exit "$status"
  fi
  ;;
kill)
  # The shim takes a failed kill of what has exited already for "not found" only when runc's
  # words say so; runsc says "sandbox is not running".
  out="$(runsc "$@" 2>&1)" && exit 0
  status=$?
  case "$out" in *"is not running"*) out="$out (container not running)" ;; esac
  printf '%s\n' "$out" >&2
  exit "$status"
  ;;
delete)
  if holder="$(cat "$HOLD/$id.pid" 2>/dev/null)"; then
    kill "$holder" 2>/dev/null
    rm -f "$HOLD/$id.pid"
  fi
  ;;
esac
exec "$RUNSC" "${FLAGS[@]}" "$@"
