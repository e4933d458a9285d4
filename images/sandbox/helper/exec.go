package main

import (
	"errors"
	"os"
	"os/exec"
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

// killRequest asks for TERM to the command's group, then KILL after GraceMs (default 1000).
type killRequest struct {
	GraceMs int `json:"graceMs"`
}

type exitBody struct {
	Code   int `json:"code"`
	Signal int `json:"signal,omitempty"`
}

type running struct {
	pgid int
	done chan struct{}
}

type registry struct {
	w  *writer
	mu sync.Mutex
	// spawnMu is held while a command starts and while strays are swept, so a sweep never
	// kills a command that is starting (lock order: spawnMu, then mu).
	spawnMu sync.Mutex
	cmds    map[uint32]*running
}

func newRegistry(w *writer) *registry {
	return &registry{w: w, cmds: map[uint32]*running{}}
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
	cmd := &exec.Cmd{Path: path, Args: req.Argv, Dir: req.Cwd, Env: req.Env, Stdout: outW, Stderr: errW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		r.notRunnable(id, req.Argv[0], err)
		return
	}
	run := &running{pgid: cmd.Process.Pid, done: make(chan struct{})}
	r.mu.Lock()
	r.cmds[id] = run
	r.mu.Unlock()
	go r.supervise(id, req, cmd, run, outR, errR)
}

// notRunnable reports a command that could not start with the shell's conventions: 127 when it
// does not exist, 126 when it exists but cannot be executed.
func (r *registry) notRunnable(id uint32, name string, err error) {
	code, what := 126, "permission denied"
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, exec.ErrNotFound) {
		code, what = 127, "command not found"
	}
	r.w.send(tStderr, id, []byte("warden-helper: "+name+": "+what+"\n"))
	r.w.sendJSON(tExit, id, exitBody{Code: code})
}

func (r *registry) supervise(id uint32, req execRequest, cmd *exec.Cmd, run *running, outR, errR *os.File) {
	activity := make(chan struct{}, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	go r.pump(id, tStdout, outR, activity, &readers)
	go r.pump(id, tStderr, errR, activity, &readers)
	pipesClosed := make(chan struct{})
	go func() { readers.Wait(); close(pipesClosed) }()

	_ = cmd.Wait()
	code, sig := exitStatus(cmd.ProcessState)

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
	_ = syscall.Kill(-run.pgid, syscall.SIGKILL)
	select {
	case <-pipesClosed:
	case <-time.After(500 * time.Millisecond):
		// A process that left the group still holds a pipe: stop reading it.
		outR.Close()
		errR.Close()
		<-pipesClosed
	}
	r.mu.Lock()
	delete(r.cmds, id)
	r.mu.Unlock()
	close(run.done)
	r.sweepIfIdle()
	r.w.sendJSON(tExit, id, exitBody{Code: code, Signal: sig})
}

// pump forwards one pipe as frames of at most 256 KiB. It waits for each frame to be written
// before reading again, so at most one chunk per pipe is in flight.
func (r *registry) pump(id uint32, typ byte, f *os.File, activity chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer f.Close()
	growPipe(f)
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.w.sendSync(typ, id, buf[:n])
			select {
			case activity <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
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
		grace = time.Second
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
func exitStatus(ps *os.ProcessState) (int, int) {
	if ps == nil {
		return 255, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			return 128 + int(ws.Signal()), int(ws.Signal())
		}
		return ws.ExitStatus(), 0
	}
	return ps.ExitCode(), 0
}

// growPipe asks for a 1 MiB pipe buffer (F_SETPIPE_SZ; the unprivileged maximum by default), so
// a fast writer and this reader switch less often. Failure leaves the default 64 KiB.
func growPipe(f *os.File) {
	if raw, err := f.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, 1031 /* F_SETPIPE_SZ */, 1<<20)
		})
	}
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
