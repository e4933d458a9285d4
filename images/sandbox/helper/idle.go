// Idle-init mode (protocol version 3): `warden-helper --init` as PID 1 of a Kubernetes sandbox
// container, whose channel is an exec stream (channel.go). It holds no channel, so nothing it
// does reaches the container's stdout or stderr (which the node logs): it points its stdio at
// /dev/null, marks itself not dumpable, reaps every process that re-parents to it (orphans of
// commands) so no zombie fills the pids limit, and exits on SIGTERM, SIGINT or SIGHUP (the
// kubelet's stop; the kernel then kills the container's other processes).
package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// initArg starts the idle-init mode (see the file comment).
const initArg = "--init"

// runIdleInit is PID 1's whole life in idle-init mode; it never returns.
func runIdleInit() {
	if os.Getpid() != 1 {
		logf("%s is the container's PID 1 only", initArg)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	reserveThreads(initThreads)
	// Caught before anything else, so no signal is lost (PID 1 ignores signals it has no handler for).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	setNotDumpable()
	// The channel's file-size cap (fsize.go) on PID 1 too, though it starts no process; when the
	// mounts are wrong the channel refuses to serve and says why.
	_, _ = capChannelFileSize()
	dropStdio()
	for {
		reapZombies()
		select {
		case <-stop:
			os.Exit(0)
		case <-children:
		}
	}
}

// reapZombies collects every child that has exited (one SIGCHLD may stand for several).
func reapZombies() {
	for {
		if _, _, ok := waitAny(); !ok {
			return
		}
	}
}
