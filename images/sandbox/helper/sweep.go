// Stray sweep: when the last running command finishes, every process a command left behind
// (setsid'd or double-forked daemons that re-parented to PID 1) is killed before the exit frame
// is sent, so nothing a call started outlives it (public fault case 19: "a later pgrep finds
// nothing"). Kept: PID 1, the helper itself, processes that docker exec started (their chain
// reaches a process whose parent is outside the container, PPid 0) with their children, and the
// trees of the background processes' shims in the keep set (spawn.go): a shim this helper
// spawned, or one a keep frame listed, identified by pid and start time. A process that runs
// `warden-helper --proc-run` by itself is not in the keep set and is swept like any stray. The
// Kubernetes channel's last sweep, when its stream ends (stopAll, channel.go), spares every
// shim's tree: the controller that adopts the sandbox next says which ones it keeps.
package main

import (
	"os"
	"time"
)

// shimSpare names the shims whose trees a sweep spares: every process running `--proc-run`
// (any), or the keep set's shims, each by pid and start time (keep).
type shimSpare struct {
	any  bool
	keep map[int]uint64
}

// roots returns the spared shims present in procs (the keep set's only with their start time).
func (s shimSpare) roots(procRoot string, procs map[int]procEntry) map[int]bool {
	if s.any {
		return procRunPids(procRoot, procs)
	}
	out := map[int]bool{}
	for pid, start := range s.keep {
		if e, ok := procs[pid]; ok && e.start == start {
			out[pid] = true
		}
	}
	return out
}

// sweepIfIdle kills the strays when no command is running or starting.
func (r *registry) sweepIfIdle() {
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	r.mu.Lock()
	idle := len(r.cmds) == 0
	spare := r.keptShims()
	r.mu.Unlock()
	if idle && r.sweep != nil {
		r.sweep(spare)
	}
}

// killStrays SIGKILLs every stray process, in rounds until none is left (a forking process may
// create new ones while it is being killed); at most 20 rounds, about 200 ms.
func killStrays(spare shimSpare) {
	self := os.Getpid()
	killRounds("/proc", sigkill, func(procs map[int]procEntry) []int {
		return strays(self, procs, spare.roots("/proc", procs))
	}, 20, 10*time.Millisecond)
}

// strays returns the processes of procs that isStray judges stray.
func strays(self int, procs map[int]procEntry, spared map[int]bool) []int {
	var out []int
	for pid := range procs {
		if isStray(pid, self, procs, spared) {
			out = append(out, pid)
		}
	}
	return out
}

// isStray: not PID 1, not the helper, not under a docker exec process, not in the tree of a
// spared shim (spared: their pids), and not a zombie already waiting for its parent (procs holds
// none: killing those is a no-op anyway).
func isStray(pid, self int, procs map[int]procEntry, spared map[int]bool) bool {
	if pid == 1 || pid == self {
		return false
	}
	for p, hops := pid, 0; hops < 4096; hops++ {
		if spared[p] {
			return false
		}
		e, ok := procs[p]
		if !ok {
			return true // the chain left the snapshot: an exited parent, re-parented soon.
		}
		switch {
		case e.ppid == 0:
			return p == 1 // p is a docker exec process when it is not PID 1.
		case e.ppid == 1, e.ppid == self:
			return true
		}
		p = e.ppid
	}
	return true
}
