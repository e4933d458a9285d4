// The helper's own share of the container's pids.max. Threads are tasks: each one counts against
// the limit like a process. The helper runs on a fixed, pre-created set of OS threads, so that
// once it has started it never needs clone(2) for itself: when commands use up every pid (a fork
// bomb, a large batch), the Go runtime would otherwise abort the helper the moment it needs one
// more thread ("runtime: failed to create new OS thread"), and the session with it.
//
// Threads the helper can need at once: helperProcs running goroutines, sysmon, one per blocking
// system call in flight (at most fileOpSlots file operations, the stdin reader, the stdout
// writer, a spawn, a stray sweep, the dispatch loop's stat calls, a background process's spawn
// or a keep frame: one at a time, spawn.go) and the runtime's template thread. Measured in the
// sandbox image: about 30 tasks for both processes, idle or serving (warden's
// HELPER_PIDS_RESERVE, src/sandbox/limits.ts, budgets 40). Pipes to commands are read through the
// runtime's poller and waiting for commands costs no thread (reaper.go). Each background
// process's shim (proc_run.go) is a process with its own small reserve (shimThreads).
package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

const (
	// helperProcs is GOMAXPROCS of the serving helper: it only moves bytes, and without a cap Go
	// takes one P per host CPU (not the container's CPU limit), each of which may run a thread.
	helperProcs = 2
	// fileOpSlots bounds file operations running at once; more wait their turn (no thread).
	fileOpSlots = 8
	// helperThreads is the serving helper's thread reserve, created at start (see above): the
	// running Ps, the file operations, and 7 for the other blocking calls.
	helperThreads = helperProcs + fileOpSlots + 7
	// initThreads is the PID-1 parent's reserve: it waits for processes (one blocked thread),
	// forwards signals (one running) and, on a reset, reads /proc (one more in a system call).
	initThreads = 4
)

// fileOps is the semaphore of fileOpSlots.
var fileOps = make(chan struct{}, fileOpSlots)

// reserveThreads makes the Go runtime create n OS threads now and keep them idle for later use:
// n goroutines are locked to their own thread at the same time, then unlocked. The runtime never
// ends an idle thread, and takes an idle one before creating a new one.
func reserveThreads(n int) {
	var locked, release sync.WaitGroup
	locked.Add(n)
	release.Add(1)
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			locked.Done()
			release.Wait()
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	release.Done()
}

// cgroupPidsDirs are where the container's pids controller files are: cgroup v2, then v1.
var cgroupPidsDirs = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/pids"}

// pidsMax is the container's process limit as the cgroup states it ("256", "max"), or "unknown"
// when no pids controller is visible (e.g. gVisor).
func pidsMax() string {
	for _, dir := range cgroupPidsDirs {
		if b, err := os.ReadFile(dir + "/pids.max"); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return "unknown"
}

// pidsMaxEvents is how many forks the pids limit has refused in this container so far (the
// "max" count of pids.events), or -1 when it cannot be read.
func pidsMaxEvents() int64 {
	for _, dir := range cgroupPidsDirs {
		if b, err := os.ReadFile(dir + "/pids.events"); err == nil {
			return parsePidsEvents(string(b))
		}
	}
	return -1
}

// parsePidsEvents reads the "max N" line of a pids.events file; -1 when there is none.
func parsePidsEvents(s string) int64 {
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 && fields[0] == "max" {
			if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// pidsLimitMessage explains a fork the pids limit refused, naming the limit and the setting.
func pidsLimitMessage(what string) string {
	return "warden-helper: " + what + ": the sandbox's process limit is reached (pids.max = " + pidsMax() +
		", processes and threads together; warden's limits.pids). Run fewer processes at once, or create the sandbox with a higher limits.pids.\n"
}
