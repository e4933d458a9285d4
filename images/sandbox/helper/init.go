// PID-1 mode of warden-helper. The container's main process holds the attach pipes (the
// channel), and every process of the sandbox user can open /proc/1/fd/N of a dumpable process
// with the same uid: a command could forge reply frames or steal requests. So the helper runs as
// PID 1 itself (no docker-init) and splits in two:
//
//   - the PID-1 parent starts the real helper as its child with the stdio pipes, replaces its own
//     fds 0, 1 and 2 with /dev/null, marks itself non-dumpable, and only reaps zombies (orphans
//     re-parent to PID 1), forwards SIGTERM/SIGINT/SIGHUP to the child, and exits with the
//     child's status when it exits (128+N for a death by signal N);
//   - the child calls prctl(PR_SET_DUMPABLE, 0) first, so /proc/<child>/fd and /mem become root
//     owned and ptrace access (hence pidfd_getfd) is denied to the sandbox user.
//
// Commands the child starts are exec'd normally (execve resets dumpable) and get only the pipes
// os/exec passes them: Go opens every other fd close-on-exec.
//
// Reset (protocol version 2, reset.go): on SIGUSR1, when a docker exec process asks for it, the
// PID-1 parent SIGKILLs every other process of the container (the child, its commands and the
// `--reset` process that asked) but the trees of background processes' shims (processes running
// `--proc-run`, version 9: proc_run.go), per pid in rounds until only those are left (proctree.go),
// and starts a fresh child on the same pipes, which it keeps for that as close-on-exec copies (it
// is not dumpable, so no command can open them). A controller that restarted uses this to
// re-attach: the old child may have read half a frame of the dead controller, the new one starts
// clean; its first frames include a keep frame (spawn.go), which kills the shims the controller
// cannot verify, with their trees.
package main

import (
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
)

// serveArg marks the child process started by the PID-1 parent.
const serveArg = "--serve"

const prSetDumpable = 4 // PR_SET_DUMPABLE, linux/prctl.h

// setNotDumpable makes /proc/self/{fd,mem,environ} unreadable to the sandbox user (they become
// root owned) and refuses it ptrace access. Returns the errno of prctl(2), 0 on success.
func setNotDumpable() syscall.Errno {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	return errno
}

// runAsInit is the PID-1 parent's whole life: start the child, drop the pipes, reap. It never
// returns: the process exits with the child's status.
func runAsInit() {
	runtime.GOMAXPROCS(1)
	reserveThreads(initThreads)
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	// Signals are caught before the child exists, so none is lost (PID 1 ignores signals
	// it has no handler for).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	setNotDumpable()
	stdio := keepStdio()
	start := func() *os.Process {
		child, err := os.StartProcess(self, []string{os.Args[0], serveArg}, &os.ProcAttr{
			Files: stdio,
			Env:   os.Environ(),
		})
		if err != nil {
			logf("cannot start the helper process: %v", err)
			os.Exit(127)
		}
		return child
	}
	var mu sync.Mutex
	child := start()
	resets := &resetState{}
	dropStdio()
	go func() {
		for s := range sigs {
			mu.Lock()
			if s == syscall.SIGUSR1 {
				if resetAsked("/proc") {
					resets.request()
					killAllButShims()
				}
			} else {
				_ = child.Signal(s)
			}
			mu.Unlock()
		}
	}()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// ECHILD cannot happen while the child lives; stay safe and stop.
			os.Exit(255)
		}
		mu.Lock()
		if pid == child.Pid {
			if resets.childExited() {
				child = start()
				mu.Unlock()
				continue
			}
			if ws.Signaled() {
				os.Exit(128 + int(ws.Signal()))
			}
			os.Exit(ws.ExitStatus())
		}
		mu.Unlock()
	}
}

// killAllButShims is the reset's kill: every process but PID 1 and the shims' trees, in rounds
// until none is left, at most takeOverWait (channel.go). The killed processes stay zombies until
// the wait loop reaps them, and a zombie counts as gone.
func killAllButShims() {
	if left := killRounds("/proc", sigkill, func(procs map[int]procEntry) []int {
		return allButShimTrees("/proc", 1, procs)
	}, int(takeOverWait/killRoundPause), killRoundPause); left > 0 {
		logf("reset: %d processes were still alive %s after SIGKILL", left, takeOverWait)
	}
}

// keepStdio returns close-on-exec copies of fds 0, 1 and 2 (the attach pipes) for the children a
// reset starts; the originals are then dropped (dropStdio). Falls back to the originals' files
// when a copy cannot be made (then a reset's new child gets /dev/null and serves no channel).
func keepStdio() []*os.File {
	out := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for fd := 0; fd <= 2; fd++ {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3)
		if errno == 0 {
			out[fd] = os.NewFile(r, out[fd].Name())
		}
	}
	return out
}

// dropStdio points fds 0, 1 and 2 at /dev/null, so PID 1 no longer holds the attach pipes.
func dropStdio() {
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	if err != nil {
		// Without /dev/null, closing is the next best thing.
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Close(fd)
		}
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = syscall.Dup2(int(null.Fd()), fd)
	}
	_ = null.Close()
}
