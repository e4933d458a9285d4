// Reset of the channel after a controller restart (protocol version 2). A restarted controller
// cannot know whether the dead one left half a frame in the helper's input, so before it
// re-attaches it runs `warden-helper --reset` through docker exec: that process signals PID 1
// (SIGUSR1; the PID-1 parent has a handler, so the kernel delivers it from inside the container),
// and PID 1 SIGKILLs every other process, including the asking one, but the background processes'
// shims with their trees (version 9, proc_run.go), and starts a fresh child on the same pipes
// (init.go). PID 1 honours the signal only while such an asker exists: a process whose parent is
// outside the container (PPid 0: docker exec started it, as in sweep.go) running `warden-helper
// --reset`. A command of the sandbox cannot make one, so it cannot reset the channel under a live
// controller by signalling PID 1. The asker's death by SIGKILL (exit 137) tells the controller the
// old child and every command it ran are gone (the shims are not); anything it writes after that
// is read by the new child from a clean state. An older helper (version 1) has no reset: the
// controller checks `--version` first.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// resetArg asks PID 1 for a reset (see the file comment).
const resetArg = "--reset"

// resetWait is how long the asking process waits to be killed before it reports failure.
const resetWait = 10 * time.Second

// askReset signals PID 1 and waits to be killed by the reset. Returns the exit status for when
// that did not happen: 3 (PID 1 is not a warden-helper with reset, or refused the signal).
func askReset() int {
	if err := syscall.Kill(1, syscall.SIGUSR1); err != nil {
		logf("reset: cannot signal PID 1: %v", err)
		return 3
	}
	time.Sleep(resetWait)
	logf("reset: PID 1 did not reset the helper within %s", resetWait)
	return 3
}

// resetState counts reset requests PID 1 has not completed yet: a child exit while one is
// pending starts a new child instead of ending the container.
type resetState struct{ pending int }

// request records a reset request (PID 1 then kills every other process).
func (r *resetState) request() { r.pending++ }

// childExited reports whether the child's exit was a reset's (start a new child) and consumes it.
// Several requests before the exit count as one reset: the new child starts clean either way.
func (r *resetState) childExited() bool {
	if r.pending == 0 {
		return false
	}
	r.pending = 0
	return true
}

// resetAsked reports whether a docker exec process (PPid 0, not PID 1) under procRoot ("/proc")
// runs `warden-helper --reset`: the only asker PID 1 honours.
func resetAsked(procRoot string) bool {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) S ppid ...": comm may hold spaces and parentheses.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != "0" {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) == 2 && filepath.Base(args[0]) == "warden-helper" && args[1] == resetArg {
			return true
		}
	}
	return false
}
