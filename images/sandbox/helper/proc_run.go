// The shim of one background process (protocol version 9): `warden-helper --proc-run`, started by
// the helper for a spawn frame (spawn.go), owns one command for its whole life and outlives the
// channel (a controller restart, a Docker reset, a Kubernetes channel takeover spare its tree:
// proctree.go). Everything travels through files in the process's directory, which the
// controller reads and writes with the channel's file operations:
//   - out/<n>: the output, stdout and stderr as one stream (or the terminal's), in segments of
//     segmentBytes, the last keepSegments kept (proc_output.go);
//   - in/<seq>.<kind>: requests (data, eof, signal, resize), handled in name order (proc_input.go);
//   - exit.json: the command's status, written atomically once it has ended and its tree is gone
//     (into space reserved at the start, so a /tmp the output filled does not lose it;
//     proc_exit.go).
//
// The shim reads its config (the spawn request, JSON) on fd 3 and writes one reply line on fd 4,
// {"commandPid": n} or {"errno": "...", "message": "..."}, then closes both. It is a child
// subreaper (every orphan of the command re-parents to it, so its tree is the whole process), not
// dumpable, on one P with a small thread reserve; it starts the command in its own process group
// with pipes (stdin, and one pipe for stdout and stderr), or as the leader of a new session whose
// controlling terminal is a pseudo-terminal (proc_pty.go). It reaps every child; when the command
// exits it waits up to graceMs for the output to end, SIGKILLs what is left of its tree, drains
// the output (at most graceMs + 1 s more), writes exit.json and exits 0. It ignores SIGHUP, SIGINT
// and SIGTERM (a command's `kill -TERM -1` must not lose the record of its processes; SIGKILL
// still ends it). It inherits the helper's seccomp filter and, on Kubernetes, its file-size cap.
package main

import (
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// shimThreads is a shim's thread reserve (budget.go): its command may take every pid of the
// sandbox (a fork bomb), and a Go runtime that cannot create a thread aborts, losing exit.json.
// The helper starts the shim with GOMAXPROCS=1 in its environment, so the runtime starts on one
// P: measured, a shim runs 7 threads (5 without the reserve), each a task of pids.max.
const shimThreads = 2

// procConfig is the spawn request (spawn.go) and the shim's config, the same JSON.
type procConfig struct {
	Dir          string   `json:"dir"`
	Argv         []string `json:"argv"`
	Cwd          string   `json:"cwd"`
	Env          []string `json:"env"`
	SegmentBytes int64    `json:"segmentBytes"`
	KeepSegments int64    `json:"keepSegments"`
	GraceMs      int      `json:"graceMs"`
	Pty          *ptySize `json:"pty,omitempty"`
}

// ptySize is a terminal size in character cells.
type ptySize struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// shimReply is the shim's one line on fd 4: the command's pid, or why it did not start.
type shimReply struct {
	CommandPid int    `json:"commandPid,omitempty"`
	Errno      string `json:"errno,omitempty"`
	Message    string `json:"message,omitempty"`
}

// normalize fills the defaults (segmentBytes 1 MiB, keepSegments 8, graceMs 100) and checks the
// rest; an error is the tagged EINVAL.
func (c *procConfig) normalize() error {
	bad := func(msg string) error { return &taggedError{"EINVAL", msg} }
	if c.SegmentBytes == 0 {
		c.SegmentBytes = 1 << 20
	}
	if c.KeepSegments == 0 {
		c.KeepSegments = 8
	}
	if c.GraceMs == 0 {
		c.GraceMs = 100
	}
	switch {
	case len(c.Argv) == 0 || c.Argv[0] == "":
		return bad("argv is empty")
	case c.SegmentBytes < 1 || c.SegmentBytes > 1<<30:
		return bad("segmentBytes must be from 1 to 1 GiB")
	case c.KeepSegments < 1 || c.KeepSegments > 1<<16:
		return bad("keepSegments must be from 1 to 65536")
	case c.GraceMs < 0 || c.GraceMs > 60000:
		return bad("graceMs must be from 0 to 60000")
	case c.Pty != nil && !validSize(c.Pty.Cols, c.Pty.Rows):
		return bad("pty cols and rows must be from 1 to 1000")
	}
	return nil
}

// validSize: a terminal size both the spawn frame and a resize request accept.
func validSize(cols, rows int) bool { return cols >= 1 && cols <= 1000 && rows >= 1 && rows <= 1000 }

// shim is one running background process.
type shim struct {
	cfg    procConfig
	out    *segments
	input  *inputQueue
	pid    int      // the command's pid, its process group id
	output *os.File // the read end of the output pipe, or the PTY master
	master *os.File // the PTY master; nil with pipes
	stdin  *os.File // the write end of the stdin pipe; nil under a PTY
	// reserve is exit.json's space, taken at the start (reserveExit)
	reserve *os.File
	exited  chan syscall.WaitStatus
	// outputDone is closed when the output reached EOF (or was closed).
	outputDone chan struct{}
}

// runProcShim is the shim's whole life (see the file comment); it never returns.
func runProcShim() {
	runtime.GOMAXPROCS(1)
	reserveThreads(shimThreads)
	setNotDumpable()
	ignored := make(chan os.Signal, 4)
	signal.Notify(ignored, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		for range ignored {
		}
	}()
	// Caught before the command exists, so its exit is never missed.
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	// The config and reply pipes are the helper's, never the command's: a command holding the
	// reply's write end could stall the helper's spawn (attack-procs F5).
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	reply := os.NewFile(4, "reply")
	var s *shim
	cfg, err := readProcConfig(os.NewFile(3, "config"))
	if err == nil {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			err = &taggedError{"EIO", "prctl(PR_SET_CHILD_SUBREAPER): " + errno.Error()}
		}
	}
	if err == nil {
		s, err = startShim(cfg, children)
	}
	if err != nil {
		writeReply(reply, shimReply{Errno: errnoName(err), Message: err.Error()})
		os.Exit(1)
	}
	writeReply(reply, shimReply{CommandPid: s.pid})
	s.serve()
	os.Exit(0)
}

// readProcConfig reads and checks the config (at most 16 MiB) and closes f.
func readProcConfig(f *os.File) (procConfig, error) {
	defer f.Close()
	var cfg procConfig
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, &taggedError{"EINVAL", "bad shim config: " + err.Error()}
	}
	return cfg, cfg.normalize()
}

// writeReply writes the reply line and closes f (errors are moot: the helper reads EOF).
func writeReply(f *os.File, r shimReply) {
	j, _ := json.Marshal(r)
	_, _ = f.Write(append(j, '\n'))
	_ = f.Close()
}

// startShim prepares the output and the request queue, then starts the command; an error means
// nothing runs. children is the shim's SIGCHLD notification.
func startShim(cfg procConfig, children chan os.Signal) (*shim, error) {
	if cfg.Cwd != "" {
		if st, err := os.Stat(cfg.Cwd); err != nil || !st.IsDir() {
			errno := "ENOENT"
			if err == nil {
				errno = "ENOTDIR"
			}
			return nil, &taggedError{errno, "cwd " + cfg.Cwd + ": no such directory"}
		}
	}
	path := cfg.Argv[0]
	if !strings.Contains(path, "/") {
		found, ok := lookPath(path, cfg.Env)
		if !ok {
			return nil, startError(path, syscall.ENOENT)
		}
		path = found
	}
	s := &shim{cfg: cfg, exited: make(chan syscall.WaitStatus, 1), outputDone: make(chan struct{})}
	out, err := newSegments(filepath.Join(cfg.Dir, "out"), cfg.SegmentBytes, cfg.KeepSegments)
	if err != nil {
		return nil, err
	}
	s.out = out
	if s.reserve, err = reserveExit(cfg.Dir); err != nil {
		out.close()
		return nil, err
	}
	if s.input, err = newInputQueue(filepath.Join(cfg.Dir, "in"), s); err != nil {
		out.close()
		return nil, err
	}
	if cfg.Pty != nil {
		err = s.startWithPTY(path)
	} else {
		err = s.startWithPipes(path)
	}
	if err != nil {
		out.close()
		s.input.close()
		_ = s.reserve.Close()
		return nil, err
	}
	go s.reap(children)
	return s, nil
}

// startWithPipes starts the command in its own process group with a stdin pipe and one pipe for
// both stdout and stderr.
func (s *shim) startWithPipes(path string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	proc, err := os.StartProcess(path, s.cfg.Argv, &os.ProcAttr{
		Dir:   s.cfg.Cwd,
		Env:   s.cfg.Env,
		Files: []*os.File{inR, outW, outW},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return startError(s.cfg.Argv[0], err)
	}
	s.pid, s.stdin, s.output = proc.Pid, inW, outR
	_ = proc.Release() // the shim reaps every child itself (reap)
	return nil
}

// startError is a command that could not start: the errno's name (errnoName) and the exec
// frame's message (exec.go's notRunnableMessage: command not found, permission denied, ...).
func startError(name string, err error) error {
	msg := strings.TrimSpace(strings.TrimPrefix(notRunnableMessage(name, err), "warden-helper: "))
	return &taggedError{errnoName(err), msg}
}

// reap collects every child that has exited (the command, and every orphan of its tree) on each
// SIGCHLD; the command's status goes to s.exited.
func (s *shim) reap(children chan os.Signal) {
	for range children {
		for {
			pid, ws, ok := waitAny()
			if !ok {
				break
			}
			if pid == s.pid {
				s.exited <- ws
			}
		}
	}
}

// serve runs the process to its end and writes exit.json (see the file comment).
func (s *shim) serve() {
	go s.pump()
	s.input.start()
	ws := <-s.exited
	ended := time.Now()
	s.input.commandExited()
	grace := time.Duration(s.cfg.GraceMs) * time.Millisecond
	timer := time.NewTimer(grace)
	select {
	case <-s.outputDone:
	case <-timer.C:
	}
	timer.Stop()
	s.killTree()
	drain := time.NewTimer(grace + time.Second)
	select {
	case <-s.outputDone:
	case <-drain.C:
		_ = s.output.Close()
		<-s.outputDone
	}
	drain.Stop()
	code, sig := exitStatus(ws)
	j, _ := json.Marshal(exitRecord{
		Code: code, Signal: sig, EndedAt: ended.UnixNano() / 1e6,
		OutputBytes: s.out.offset, DroppedBytes: s.out.dropped,
	})
	s.out.close()
	s.writeExit(j)
}

// pump copies the output into the segments until EOF (a PTY master reads EIO once no process
// holds its terminal), then closes outputDone.
func (s *shim) pump() {
	defer close(s.outputDone)
	buf := make([]byte, 64<<10)
	for {
		n, err := s.output.Read(buf)
		if n > 0 {
			s.out.write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// killTree SIGKILLs the command's process group and every other descendant of the shim, in
// rounds until none is left: the shim stays alive as their subreaper, so no orphan leaves the tree.
func (s *shim) killTree() {
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	self := os.Getpid()
	killRounds("/proc", sigkill, func(procs map[int]procEntry) []int {
		var out []int
		for _, pid := range treePids(procs, map[int]bool{self: true}) {
			if pid != self {
				out = append(out, pid)
			}
		}
		return out
	}, 50, 10*time.Millisecond)
}
