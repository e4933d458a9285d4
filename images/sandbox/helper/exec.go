package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// execRequest starts one command. Env is the command's whole environment (NAME=value); argv[0]
// is looked up in its PATH; stdin is /dev/null; the command leads a new session (setsid), so its
// process group id is its pid.
type execRequest struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
	Env  []string `json:"env"`
	// PipeGraceMs: after the main process exits, how long children holding the pipes may keep
	// writing (restarted while data flows, capped at 20x) before the group is killed. Default 100.
	PipeGraceMs int `json:"pipeGraceMs"`
}

// defaultKillGrace is the TERM-to-KILL grace of a kill request that names none.
const defaultKillGrace = 500 * time.Millisecond

// killRequest asks for TERM to the command's group, then KILL after GraceMs (defaultKillGrace when
// 0 or absent; the controller always sends its KILL_GRACE_MS, src/sandbox/io-contract.ts, also 500).
type killRequest struct {
	GraceMs int `json:"graceMs"`
}

type exitBody struct {
	Code   int `json:"code"`
	Signal int `json:"signal,omitempty"`
}

type running struct {
	pgid   int
	done   chan struct{}
	exited <-chan syscall.WaitStatus
	// forksRefused is the pids limit's refusal count when the command started (-1: unknown).
	forksRefused int64
}

type registry struct {
	w      *writer
	reaper *reaper
	mu     sync.Mutex
	// spawnMu is held while a command starts and while strays are swept, so a sweep never
	// kills a command that is starting (lock order: spawnMu, then mu).
	spawnMu sync.Mutex
	cmds    map[uint32]*running
	// sweep kills the strays once no command runs, sparing the shims' trees it is told to:
	// killStrays in the helper, nil in tests (outside a sandbox it would kill every process of the
	// user whose parent is PID 1).
	sweep func(spare shimSpare)
	// keep is the keep set (spawn.go), shim pid → start time; spawning holds the shims whose
	// spawn is in flight (under mu).
	keep     map[int]uint64
	spawning map[int]uint64
	// procSlot lets one spawn or keep frame run at a time.
	procSlot chan struct{}
	// procRoot and signalPid are what a keep frame reads and how it kills: /proc and kill(2); a
	// fake snapshot and a recorder in tests.
	procRoot  string
	signalPid func(pid int, sig syscall.Signal)
}

func newRegistry(w *writer) *registry {
	return &registry{
		w: w, reaper: childReaper(), cmds: map[uint32]*running{}, sweep: killStrays,
		keep: map[int]uint64{}, spawning: map[int]uint64{}, procSlot: make(chan struct{}, 1),
		procRoot: "/proc", signalPid: sendSignal,
	}
}

func (r *registry) start(id uint32, req execRequest) {
	if len(req.Argv) == 0 {
		r.w.sendError(id, &taggedError{"EINVAL", "argv is empty"})
		return
	}
	if req.Cwd != "" {
		// As docker exec with a bad WorkingDir: a message and status 126.
		if st, serr := os.Stat(req.Cwd); serr != nil || !st.IsDir() {
			r.w.send(tStderr, id, []byte("warden-helper: chdir to cwd (\""+req.Cwd+"\") failed: no such directory\n"))
			r.w.sendJSON(tExit, id, exitBody{Code: 126})
			return
		}
	}
	path := req.Argv[0]
	if !strings.Contains(path, "/") {
		found, ok := lookPath(path, req.Env)
		if !ok {
			r.notRunnable(id, req.Argv[0], syscall.ENOENT)
			return
		}
		path = found
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		r.w.sendError(id, err)
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		r.w.sendError(id, err)
		return
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		r.w.sendError(id, err)
		return
	}
	attr := &os.ProcAttr{
		Dir:   req.Cwd,
		Env:   req.Env,
		Files: []*os.File{devNull, outW, errW},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	forksRefused := pidsMaxEvents()
	proc, err := os.StartProcess(path, req.Argv, attr)
	outW.Close()
	errW.Close()
	devNull.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		r.notRunnable(id, req.Argv[0], err)
		return
	}
	run := &running{pgid: proc.Pid, done: make(chan struct{}), exited: r.reaper.watch(proc.Pid), forksRefused: forksRefused}
	_ = proc.Release() // the reaper waits for it; nothing else may
	r.mu.Lock()
	r.cmds[id] = run
	r.mu.Unlock()
	go r.supervise(id, req, run, outR, errR)
}

// notRunnable reports a command that could not start with the shell's conventions: 127 when it
// does not exist, 126 when it exists but cannot be executed or the pids limit refused the fork
// (EAGAIN; the message names the limit).
func (r *registry) notRunnable(id uint32, name string, err error) {
	r.w.send(tStderr, id, []byte(notRunnableMessage(name, err)))
	code := 126
	if errors.Is(err, syscall.ENOENT) {
		code = 127
	}
	r.w.sendJSON(tExit, id, exitBody{Code: code})
}

// notRunnableMessage is the stderr line of a command that could not start.
func notRunnableMessage(name string, err error) string {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return "warden-helper: " + name + ": command not found\n"
	case errors.Is(err, syscall.EAGAIN):
		return pidsLimitMessage("cannot start " + name)
	case errors.Is(err, syscall.E2BIG):
		return "warden-helper: " + name + ": argument list too long (one argument may have at most 131071 bytes)\n"
	}
	return "warden-helper: " + name + ": permission denied\n"
}

func (r *registry) supervise(id uint32, req execRequest, run *running, outR, errR *os.File) {
	activity := make(chan struct{}, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	pumps := []*pipePump{newPipePump(outR), newPipePump(errR)}
	go pumps[0].run(r.w, id, tStdout, activity, &readers)
	go pumps[1].run(r.w, id, tStderr, activity, &readers)
	pipesClosed := make(chan struct{})
	go func() { readers.Wait(); close(pipesClosed) }()

	code, sig := exitStatus(<-run.exited)

	// Children that keep the pipes open get a short grace, restarted while they write, then the
	// whole group is killed (also when the pipes closed: silent background children go too).
	grace := time.Duration(req.PipeGraceMs) * time.Millisecond
	if grace <= 0 {
		grace = 100 * time.Millisecond
	}
	deadline := time.Now().Add(20 * grace)
	timer := time.NewTimer(grace)
wait:
	for {
		select {
		case <-pipesClosed:
			break wait
		case <-activity:
			if time.Now().Before(deadline) {
				if !timer.Stop() {
					<-timer.C
				}
				timer.Reset(grace)
			}
		case <-timer.C:
			break wait
		}
	}
	timer.Stop()
	for _, p := range pumps {
		p.markKilled()
	}
	_ = syscall.Kill(-run.pgid, syscall.SIGKILL)
	drainAfterKill(pumps, pipesClosed)
	r.mu.Lock()
	delete(r.cmds, id)
	r.mu.Unlock()
	close(run.done)
	r.sweepIfIdle()
	// A refused fork is often only a line of the shell's on stderr: name the limit behind it.
	if run.forksRefused >= 0 && pidsMaxEvents() > run.forksRefused {
		r.w.send(tStderr, id, []byte(pidsLimitMessage("a process could not be started while this command ran")))
	}
	r.w.sendJSON(tExit, id, exitBody{Code: code, Signal: sig})
}

func (r *registry) kill(id uint32, req killRequest) {
	r.mu.Lock()
	run := r.cmds[id]
	r.mu.Unlock()
	if run == nil {
		return
	}
	grace := time.Duration(req.GraceMs) * time.Millisecond
	if grace <= 0 {
		grace = defaultKillGrace
	}
	_ = syscall.Kill(-run.pgid, syscall.SIGTERM)
	go func() {
		select {
		case <-run.done:
		case <-time.After(grace):
			_ = syscall.Kill(-run.pgid, syscall.SIGKILL)
		}
	}()
}

// exitStatus: the process's own code, or 128+N for a death by signal N (never 0).
func exitStatus(ws syscall.WaitStatus) (int, int) {
	if ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ws.ExitStatus(), 0
}

// lookPath finds name in the PATH of env (the command's, not the helper's), as execvp does.
func lookPath(name string, env []string) (string, bool) {
	pathVar := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			pathVar = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
