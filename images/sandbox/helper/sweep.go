// Stray sweep: when the last running command finishes, every process a command left behind
// (setsid'd or double-forked daemons that re-parented to PID 1) is killed before the exit frame
// is sent, so nothing a call started outlives it (public fault case 19: "a later pgrep finds
// nothing"). Kept: PID 1, the helper itself, and processes that docker exec started (their
// chain reaches a process whose parent is outside the container, PPid 0) with their children.
package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sweepIfIdle kills the strays when no command is running or starting.
func (r *registry) sweepIfIdle() {
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	r.mu.Lock()
	idle := len(r.cmds) == 0
	r.mu.Unlock()
	if idle && r.sweep != nil {
		r.sweep()
	}
}

// killStrays SIGKILLs every stray process, in rounds until none is left (a forking process may
// create new ones while it is being killed); at most 20 rounds, about 200 ms.
func killStrays() {
	self := os.Getpid()
	for round := 0; round < 20; round++ {
		parents := processParents()
		found := false
		for pid := range parents {
			if isStray(pid, self, parents) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// isStray: not PID 1, not the helper, not under a docker exec process, and not a zombie
// already waiting for its parent (killing those is a no-op anyway).
func isStray(pid, self int, parents map[int]int) bool {
	if pid == 1 || pid == self {
		return false
	}
	for p, hops := pid, 0; hops < 4096; hops++ {
		ppid, ok := parents[p]
		if !ok {
			return true // the chain left the snapshot: an exited parent, re-parented soon.
		}
		switch {
		case ppid == 0:
			return p == 1 // p is a docker exec process when it is not PID 1.
		case ppid == 1, ppid == self:
			return true
		}
		p = ppid
	}
	return true
}

// processParents maps each live, non-zombie pid in /proc to its parent pid.
func processParents() map[int]int {
	out := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, ppid, ok := statOf(pid)
		if !ok || state == "Z" || state == "X" {
			continue
		}
		out[pid] = ppid
	}
	return out
}

// statOf reads the state and parent pid from /proc/<pid>/stat ("pid (comm) S ppid ...": comm
// may hold spaces and parentheses, so fields are taken after the last ')').
func statOf(pid int) (string, int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return fields[0], ppid, true
}
