// Reaping the helper's children. os/exec's Cmd.Wait blocks one OS thread in waitid(2) per running
// command, and every thread is a task counted against the container's pids.max: 64 concurrent
// commands cost 64 helper threads on top of the commands' own processes, and when the Go
// runtime cannot create a thread it aborts the whole helper (the session dies). Instead one
// SIGCHLD handler collects every child's status with wait4(-1, WNOHANG): no thread per command.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// reaper hands each child's wait status to the goroutine watching that pid.
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
	// early holds the status of children that exited before watch was called for them.
	early map[int]syscall.WaitStatus
}

var (
	reaperOnce sync.Once
	theReaper  *reaper
)

// childReaper is the process's one reaper (two would steal each other's children), created with
// the first registry, before any command starts. The helper waits for its children no other way.
func childReaper() *reaper {
	reaperOnce.Do(func() { theReaper = newReaper() })
	return theReaper
}

// newReaper installs the SIGCHLD handler and starts the reaping goroutine.
func newReaper() *reaper {
	rp := &reaper{waiters: map[int]chan syscall.WaitStatus{}, early: map[int]syscall.WaitStatus{}}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() {
		for range sigs {
			rp.reapAll()
		}
	}()
	return rp
}

// watch returns a channel that receives `pid`'s wait status once it has exited (buffered, so the
// reaper never blocks on it). Call it once per started child.
func (rp *reaper) watch(pid int) <-chan syscall.WaitStatus {
	ch := make(chan syscall.WaitStatus, 1)
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if ws, ok := rp.early[pid]; ok {
		delete(rp.early, pid)
		ch <- ws
		return ch
	}
	rp.waiters[pid] = ch
	return ch
}

// reapAll collects every child that has exited. One SIGCHLD may stand for several exits (signals
// coalesce), so it loops until none is left.
func (rp *reaper) reapAll() {
	for {
		pid, ws, ok := waitAny()
		if !ok {
			return
		}
		rp.mu.Lock()
		if ch, ok := rp.waiters[pid]; ok {
			delete(rp.waiters, pid)
			ch <- ws
		} else {
			rp.early[pid] = ws
		}
		rp.mu.Unlock()
	}
}

// waitAny collects one child that has exited, without blocking: its pid and status, or ok false
// when none has (or there is no child).
func waitAny() (pid int, ws syscall.WaitStatus, ok bool) {
	for {
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		return pid, ws, err == nil && pid > 0
	}
}
