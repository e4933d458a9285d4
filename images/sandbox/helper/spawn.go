// Background processes, the helper's part (protocol version 9). A spawn frame starts one process
// under a shim (`warden-helper --proc-run`, proc_run.go) that outlives the channel; a keep frame
// tells a helper that serves an adopted sandbox which shims it keeps.
//
// spawn {dir, argv, cwd, env, segmentBytes, keepSegments, graceMs, pty?}: the helper creates dir
// (/tmp/.warden/procs/<id>, id [a-z0-9-]{1,64}; mode 0700, EEXIST when it exists) with out/ and
// in/, starts the shim as its child in a new session (config on the shim's fd 3, its reply line
// on fd 4), and answers `result` {pid, startTime, commandPid}: the shim's pid and start time (the
// 22nd field of /proc/<pid>/stat, which tells it from a later process with its pid) and the
// command's pid. Or `error` {errno, message}, the shim's own when the command could not start
// (ENOENT: no such program or cwd, ...): then nothing is left, the dir removed and the shim reaped.
//
// The keep set: the shims whose trees the stray sweep spares (sweep.go), each by pid and start
// time: those this helper spawned (from the start of the spawn: the shim is a child of the helper,
// which the sweep would kill), until they exit, and those the last keep frame listed.
//
// keep {shims: [{pid, startTime}]}: the controller's verified list after it adopted a sandbox. The
// keep set becomes the listed shims that are alive with that start time and run `--proc-run`
// (and the spawns in flight); every other process running `--proc-run` is stopped and killed with
// its tree. Answers `result` {kept: [pids], killed: n}, n the number of those other shims.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// procsRoot holds the processes' directories (a temp dir in tests).
var procsRoot = "/tmp/.warden/procs"

// spawnReplyWait bounds the wait for the shim's reply; shimExitWait for its exit after a failure.
const (
	spawnReplyWait = 10 * time.Second
	shimExitWait   = 5 * time.Second
)

// spawnResult is a spawn's answer.
type spawnResult struct {
	Pid        int    `json:"pid"`
	StartTime  uint64 `json:"startTime"`
	CommandPid int    `json:"commandPid"`
}

// shimRef names one shim: pid and start time.
type shimRef struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

type keepRequest struct {
	Shims []shimRef `json:"shims"`
}

type keepResult struct {
	Kept   []int `json:"kept"`
	Killed int   `json:"killed"`
}

// handleSpawn serves a spawn frame (one spawn or keep at a time).
func (r *registry) handleSpawn(id uint32, payload []byte) {
	var req procConfig
	if err := json.Unmarshal(payload, &req); err != nil {
		r.w.sendError(id, fmt.Errorf("bad spawn request: %w", err))
		return
	}
	r.procSlot <- struct{}{}
	defer func() { <-r.procSlot }()
	res, err := r.spawn(req)
	if err != nil {
		r.w.sendError(id, err)
		return
	}
	r.w.sendJSON(tResult, id, res)
}

// handleKeep serves a keep frame.
func (r *registry) handleKeep(id uint32, payload []byte) {
	var req keepRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		r.w.sendError(id, fmt.Errorf("bad keep request: %w", err))
		return
	}
	r.procSlot <- struct{}{}
	defer func() { <-r.procSlot }()
	r.w.sendJSON(tResult, id, r.keepShims(req))
}

// checkProcDir accepts only procsRoot/<id>, id of [a-z0-9-], 1 to 64 characters.
func checkProcDir(dir string) error {
	id := filepath.Base(dir)
	ok := filepath.Dir(dir) == procsRoot && len(id) >= 1 && len(id) <= 64
	for _, c := range id {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-')
	}
	if !ok {
		return &taggedError{"EINVAL", "dir must be " + procsRoot + "/<id>, id of a-z, 0-9 and -, at most 64 characters"}
	}
	return nil
}

// spawn creates the process's directory, starts its shim and returns the shim's answer.
func (r *registry) spawn(req procConfig) (spawnResult, error) {
	if err := req.normalize(); err != nil {
		return spawnResult{}, err
	}
	if err := checkProcDir(req.Dir); err != nil {
		return spawnResult{}, err
	}
	if err := os.MkdirAll(procsRoot, 0o700); err != nil {
		return spawnResult{}, err
	}
	// A command may have put a symlink where procsRoot or a parent is (attack-procs F8): the
	// process's files would land wherever it points (e.g. in /workspace, among the changes).
	if err := realDirs(procsRoot); err != nil {
		return spawnResult{}, err
	}
	// What a dead shim left running (a command that killed its own shim) is swept before another
	// process starts, as it is after each call: such orphans never count past maxRunning for long
	// (attack-procs F3).
	r.sweepIfIdle()
	if err := os.Mkdir(req.Dir, 0o700); err != nil {
		return spawnResult{}, err
	}
	res, err := r.startShim(req)
	if err != nil {
		_ = os.RemoveAll(req.Dir)
	}
	return res, err
}

// realDirs refuses a path any of whose components from the first below / is not a directory
// of its own (a symlink, a file): EINVAL naming it.
func realDirs(path string) error {
	for p := path; p != "/" && p != "." && p != ""; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return &taggedError{"EINVAL", p + " is not a directory (a symlink or a file stands there); remove it"}
		}
	}
	return nil
}

// startShim creates out/ and in/, starts the shim and reads its reply; on a failure it kills
// and reaps the shim.
func (r *registry) startShim(req procConfig) (spawnResult, error) {
	for _, sub := range []string{"out", "in"} {
		if err := os.Mkdir(filepath.Join(req.Dir, sub), 0o700); err != nil {
			return spawnResult{}, err
		}
	}
	config, _ := json.Marshal(req)
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return spawnResult{}, err
	}
	defer cfgW.Close()
	replyR, replyW, err := os.Pipe()
	if err != nil {
		cfgR.Close()
		return spawnResult{}, err
	}
	defer replyR.Close()
	shim, exited, err := r.startShimProcess(cfgR, replyW)
	cfgR.Close()
	replyW.Close()
	if err != nil {
		return spawnResult{}, err
	}
	go func() {
		_, _ = cfgW.Write(config)
		_ = cfgW.Close()
	}()
	reply, err := readShimReply(replyR)
	r.mu.Lock()
	delete(r.spawning, shim.Pid)
	if err == nil {
		r.keep[shim.Pid] = shim.StartTime
	}
	r.mu.Unlock()
	if err != nil {
		abandonShim(shim.Pid, exited)
		return spawnResult{}, err
	}
	go func() {
		<-exited
		r.mu.Lock()
		if r.keep[shim.Pid] == shim.StartTime {
			delete(r.keep, shim.Pid)
		}
		r.mu.Unlock()
	}()
	return spawnResult{Pid: shim.Pid, StartTime: shim.StartTime, CommandPid: reply.CommandPid}, nil
}

// startShimProcess starts the shim (stdio /dev/null, the config's read end as fd 3, the reply's
// write end as fd 4, only GOMAXPROCS=1 in its environment: fewer threads, proc_run.go) and puts
// it in the spawning set, both under spawnMu, so no sweep runs between the two.
func (r *registry) startShimProcess(config, reply *os.File) (shimRef, <-chan syscall.WaitStatus, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return shimRef{}, nil, err
	}
	defer devNull.Close()
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	proc, err := os.StartProcess(self, shimArgv, &os.ProcAttr{
		Env:   []string{"GOMAXPROCS=1"},
		Files: []*os.File{devNull, devNull, devNull, config, reply},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return shimRef{}, nil, err
	}
	pid := proc.Pid
	exited := r.reaper.watch(pid)
	_ = proc.Release() // the reaper waits for it; nothing else may
	_, e, _ := procStat("/proc", pid)
	shim := shimRef{Pid: pid, StartTime: e.start}
	r.mu.Lock()
	r.spawning[shim.Pid] = shim.StartTime
	r.mu.Unlock()
	return shim, exited, nil
}

// readShimReply reads the shim's line: the command's pid, or its error.
func readShimReply(f *os.File) (shimReply, error) {
	var reply shimReply
	_ = f.SetReadDeadline(time.Now().Add(spawnReplyWait))
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return reply, &taggedError{"EIO", fmt.Sprintf("the process's shim did not answer within %s", spawnReplyWait)}
		}
		return reply, &taggedError{"EIO", "the process's shim exited without an answer"}
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		return reply, &taggedError{"EIO", "the process's shim answered " + fmt.Sprintf("%q", line)}
	}
	if reply.Errno != "" {
		return reply, &taggedError{reply.Errno, reply.Message}
	}
	if reply.CommandPid <= 0 {
		return reply, &taggedError{"EIO", "the process's shim answered no command pid"}
	}
	return reply, nil
}

// abandonShim kills the tree of a shim whose spawn failed and waits for its exit.
func abandonShim(pid int, exited <-chan syscall.WaitStatus) {
	killRounds("/proc", sigkill, func(procs map[int]procEntry) []int {
		return treePids(procs, map[int]bool{pid: true})
	}, 20, 10*time.Millisecond)
	select {
	case <-exited:
	case <-time.After(shimExitWait):
		logf("the shim %d of a failed spawn did not exit within %s", pid, shimExitWait)
	}
}

// keptShims is the sweep's spare set: the keep set and the spawns in flight (r.mu held).
func (r *registry) keptShims() shimSpare {
	keep := make(map[int]uint64, len(r.keep)+len(r.spawning))
	for pid, start := range r.keep {
		keep[pid] = start
	}
	for pid, start := range r.spawning {
		keep[pid] = start
	}
	return shimSpare{keep: keep}
}

// keepShims replaces the keep set with the verified shims of req and kills every other shim's
// tree (see the file comment).
func (r *registry) keepShims(req keepRequest) keepResult {
	r.spawnMu.Lock()
	defer r.spawnMu.Unlock()
	procs := readProcs(r.procRoot)
	kept := map[int]uint64{}
	res := keepResult{Kept: []int{}}
	for _, s := range req.Shims {
		e, alive := procs[s.Pid]
		if _, dup := kept[s.Pid]; !dup && alive && e.start == s.StartTime && runsProcRun(r.procRoot, s.Pid) {
			kept[s.Pid] = s.StartTime
			res.Kept = append(res.Kept, s.Pid)
		}
	}
	r.mu.Lock()
	r.keep = kept
	spared := r.keptShims().roots(r.procRoot, procs)
	r.mu.Unlock()
	others := map[int]uint64{}
	for pid := range procRunPids(r.procRoot, procs) {
		if !spared[pid] {
			others[pid] = procs[pid].start
		}
	}
	res.Killed = len(others)
	stopThenKill(r.procRoot, r.signalPid, others)
	return res
}
