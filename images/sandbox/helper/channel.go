// Exec-channel mode (protocol version 3; the file-size cap from version 4; the shims spared from
// version 9): `warden-helper --channel`, a process that the Kubernetes exec API (pods/exec) starts
// in a running sandbox container, serving the channel on the exec stream's stdin and stdout. On
// Kubernetes the container's own stdout and stderr cannot be kept off the node: the CRI runtime
// writes every byte of them to the kubelet's pod log directory
// (/var/log/pods/<namespace>_<pod>_<uid>/<container>/N.log, read back by `kubectl logs`), so
// the channel must not be the container's stdio there. An exec stream's output is not logged.
// PID 1 of such a container is the idle init (idle.go).
//
// What the channel process keeps from the PID-1 design (init.go):
//   - it is not dumpable before it reads a byte, so no command of the sandbox user can open
//     /proc/<pid>/fd/0 or /fd/1 (steal requests, forge replies) or its memory; commands get only
//     the pipes os/exec passes them;
//   - one channel at a time: on start it SIGKILLs every other process of the container but PID 1
//     and the trees of background processes' shims (processes running `--proc-run`, proc_run.go),
//     per pid, in rounds until none is left (a forking process may create new ones while it is
//     being killed; proctree.go), and waits until they are gone. A channel left by a controller
//     that died is replaced, with every command it started, before the new one serves (a restarted
//     controller's adoption is this, then a keep frame, spawn.go, which kills the shims it cannot
//     verify with their trees); a command of the sandbox that runs `--channel` itself gains
//     nothing: it ends the session's channel, which any process of the sandbox user could already
//     kill;
//   - (version 4) it caps the size of every file it and its commands write at the larger of the
//     /workspace and /tmp tmpfs sizes (RLIMIT_FSIZE, fsize.go), and refuses to serve when either
//     is not a size-limited tmpfs; and it makes fallocate(2) fail for itself and every command
//     (a seccomp filter, seccomp.go), which takes blocks without growing a file past that cap;
//   - (version 7) the same filter refuses every command a new user namespace (userns.go);
//   - when its stream ends (stdin EOF, the controller closed it or died, or stdout broke), it
//     kills every command it started, their process groups and the strays under PID 1, and exits:
//     nothing a dead controller started keeps running but the background processes' shims with
//     their trees, which the next controller adopts (or ends with a keep frame).
package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// channelArg starts the exec-channel mode (see the file comment).
const channelArg = "--channel"

// takeOverWait bounds how long a new channel waits for the processes it killed to be gone.
const takeOverWait = 5 * time.Second

// runChannel is the exec-channel process's whole life; it never returns.
func runChannel() {
	if os.Getpid() == 1 {
		logf("%s serves an exec stream; PID 1 of a Kubernetes sandbox runs %s", channelArg, initArg)
		os.Exit(2)
	}
	if errno := setNotDumpable(); errno != 0 {
		// A dumpable channel process would let commands open its fds: refuse to serve.
		logf("prctl(PR_SET_DUMPABLE, 0) failed: %v; not serving", errno)
		os.Exit(2)
	}
	// A broken stdout is a write error (EPIPE), not a silent death by SIGPIPE that would leave the
	// commands running. A caught signal is reset to its default in the commands (execve).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// Before it serves or replaces anything: no command may write past the tmpfs sizes (fsize.go).
	if _, err := capChannelFileSize(); err != nil {
		logf("file-size cap: %v; not serving", err)
		os.Exit(2)
	}
	// fallocate(2) takes blocks past that cap (FALLOC_FL_KEEP_SIZE): refuse it (seccomp.go); and
	// no command may make a user namespace (userns.go).
	if err := installSeccompFilter(true); err != nil {
		logf("seccomp filter: %v; not serving", err)
		os.Exit(2)
	}
	if left := takeOver(); left > 0 {
		logf("%d other processes were still alive %s after SIGKILL; serving anyway", left, takeOverWait)
	}
	runtime.GOMAXPROCS(helperProcs)
	reserveThreads(helperThreads)
	w := newWriter()
	cmds := newRegistry(w)
	w.fail = func() { cmds.stopAll(); os.Exit(3) }
	in := bufio.NewReaderSize(os.Stdin, 256<<10)
	for {
		f, err := readFrame(in)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				logf("channel stopped: %v", err)
			}
			cmds.stopAll()
			os.Exit(0)
		}
		dispatch(w, cmds, f)
	}
}

// takeOver SIGKILLs every other process of the container but PID 1 and the shims' trees, in
// rounds 5 ms apart, until none is left or takeOverWait has passed; returns how many still were.
func takeOver() int {
	self := os.Getpid()
	return killRounds("/proc", sigkill, func(procs map[int]procEntry) []int {
		return allButShimTrees("/proc", self, procs)
	}, int(takeOverWait/killRoundPause), killRoundPause)
}

// killRoundPause is the pause between two rounds of takeOver and of the Docker reset (init.go).
const killRoundPause = 5 * time.Millisecond

// stopAll SIGKILLs every running command's process group, then the strays (sweep.go: what the
// commands left under PID 1 or this process), sparing every shim's tree, kept or not: the
// controller that adopts the sandbox next decides (keep frame, spawn.go). Processes of other exec
// sessions are kept.
func (r *registry) stopAll() {
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	r.mu.Lock()
	for _, run := range r.cmds {
		_ = syscall.Kill(-run.pgid, syscall.SIGKILL)
	}
	r.mu.Unlock()
	if r.sweep != nil {
		r.sweep(shimSpare{any: true})
	}
}
