// warden-helper: the in-container end of warden's exec channel. It reads request frames from stdin
// and writes reply frames to stdout; its own diagnostics go to stderr. No network, no port.
// Standard library only, built static. Two ways to run it:
//   - Docker: the container's main process (PID 1 itself, see init.go), the channel on its attach
//     stream (the container's logging is off);
//   - Kubernetes: PID 1 is `--init`, an idle init (idle.go), and the channel is a process the exec
//     API starts, `--channel` (channel.go), because the node logs a container's own stdio.
//
// Either channel starts background processes (spawn.go), each owned by a copy of this binary in
// `--proc-run` mode, its shim (proc_run.go), which outlives the channel.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
)

// version 2: `--reset` and PID 1's SIGUSR1 reset (reset.go) for re-attaching after a controller restart.
// version 3: `--init` (idle.go) and `--channel` (channel.go), the exec-stream channel of Kubernetes.
// version 4: `--channel` caps every file it and its commands write (RLIMIT_FSIZE) at the larger of
// the /workspace and /tmp tmpfs sizes, and refuses to serve without them (fsize.go).
// version 5: the channel's seccomp filter also refuses the preallocation ioctls (FS_IOC_RESVSP64,
// ZERO_RANGE, XFS ALLOCSP …; seccomp.go), and the image has the execute-only copy the channel runs.
// version 6: the `switch` request moves the Docker channel onto a unix socket (socket.go).
// version 7: every command runs under the seccomp filter's user-namespace part, on Docker too
// (userns.go): clone/unshare with CLONE_NEWUSER and setns fail with EPERM, clone3 with ENOSYS.
// version 8: no command may set or create a mode with the set-user-ID or set-group-ID bit (EPERM;
// filemode.go), openat2 and io_uring_setup fail with ENOSYS on every runtime, and
// `--seccomp-exec` (seccomp_exec.go) runs a docker exec's command under the same filter.
// version 9: background processes: the spawn and keep frames (spawn.go) and the shim that owns
// each process, `--proc-run` (proc_run.go), whose tree the stray sweep, the Docker reset and the
// Kubernetes channel's takeover spare (proctree.go).
const version = "9"

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "warden-helper: "+format+"\n", args...)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println(version)
		return
	}
	if len(os.Args) > 1 && os.Args[1] == resetArg && os.Getpid() != 1 {
		os.Exit(askReset())
	}
	if len(os.Args) > 1 && os.Args[1] == procRunArg && os.Getpid() != 1 {
		runProcShim()
	}
	if len(os.Args) > 1 && os.Args[1] == seccompExecArg {
		runSeccompExec(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == initArg {
		runIdleInit()
	}
	if len(os.Args) > 1 && os.Args[1] == channelArg {
		runChannel()
	}
	if os.Getpid() == 1 {
		runAsInit()
	}
	// The real helper: not dumpable, so no command can open its fds (the attach pipes).
	errno := setNotDumpable()
	if errno != 0 {
		logf("prctl(PR_SET_DUMPABLE, 0) failed: %v", errno)
	}
	// No command may make a user namespace (userns.go): gVisor does not load the container's
	// seccomp profile. Without the filter, no channel: the controller falls back to docker exec.
	if err := installSeccompFilter(false); err != nil {
		logf("seccomp filter: %v; not serving", err)
		os.Exit(2)
	}
	// The container keeps stdin open between attaches (StdinOnce false), so the controller can
	// re-attach. The helper never exits on its own: the container lives until it is stopped.
	runtime.GOMAXPROCS(helperProcs)
	reserveThreads(helperThreads)
	w := newWriter()
	cmds := newRegistry(w)
	in := bufio.NewReaderSize(os.Stdin, 256<<10)
	source := "stdin"
	for {
		f, err := readFrame(in)
		if err != nil {
			// A lost channel socket is a lost attach stream: what the dead controller started
			// runs on (its output discarded, writer.go) until a new controller adopts the sandbox
			// and resets it (reset.go), or the container is removed; so a tunnel a command holds
			// ends, and is audited, after the restart, as on the attach stream.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || source != "stdin" {
				// No channel (stdin is not open, or the controller closed its socket): stay up
				// like `sleep infinity`, so the container still serves warden's docker-exec
				// fallback, and a controller that restarts can reset this process (reset.go).
				logf("%s closed (%v); serving no channel, idling", source, err)
				for {
					time.Sleep(time.Hour)
				}
			}
			// The stream is out of sync and cannot be trusted again: stop serving, stay up.
			logf("protocol error, channel stopped: %v", err)
			for {
				time.Sleep(time.Hour)
			}
		}
		if f.typ == tSwitch {
			if socket := switchToSocket(w, f, errno == 0, source != "stdin"); socket != nil {
				in, source = socket, "the channel socket"
			}
			continue
		}
		dispatch(w, cmds, f)
	}
}

func dispatch(w *writer, cmds *registry, f frame) {
	switch f.typ {
	case tPing:
		w.sendJSON(tPong, f.id, map[string]interface{}{"version": version, "pid": os.Getpid()})
	case tExec:
		var req execRequest
		if err := json.Unmarshal(f.payload, &req); err != nil {
			w.sendError(f.id, fmt.Errorf("bad exec request: %w", err))
			return
		}
		cmds.start(f.id, req)
	case tKill:
		var req killRequest
		_ = json.Unmarshal(f.payload, &req)
		cmds.kill(f.id, req)
	case tSpawn:
		go cmds.handleSpawn(f.id, f.payload)
	case tKeep:
		go cmds.handleKeep(f.id, f.payload)
	case tRead, tWrite, tStat, tRealpath, tListDir, tUntar:
		go func() {
			fileOps <- struct{}{}
			defer func() { <-fileOps }()
			fileOp(w, f)
		}()
	default:
		w.sendError(f.id, fmt.Errorf("unknown frame type 0x%02x", f.typ))
	}
}

// errnoName maps an error to a stable errno name for the controller's error table.
func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT, syscall.ESRCH:
			// ESRCH: a /proc/<pid> file whose process ended between open and read (the
			// controller reads a shim's /proc/<pid>/stat to tell whether it runs).
			return "ENOENT"
		case syscall.ENOTDIR:
			return "ENOTDIR"
		case syscall.EISDIR:
			return "EISDIR"
		case syscall.EACCES, syscall.EPERM:
			return "EACCES"
		case syscall.EROFS:
			return "EROFS"
		case syscall.ENOSPC, syscall.EDQUOT:
			return "ENOSPC"
		case syscall.ELOOP:
			return "ELOOP"
		case syscall.EEXIST:
			return "EEXIST"
		}
		return "EIO"
	}
	var tagged *taggedError
	if errors.As(err, &tagged) {
		return tagged.errno
	}
	return "EINVAL"
}

type taggedError struct {
	errno string
	msg   string
}

func (e *taggedError) Error() string { return e.msg }
