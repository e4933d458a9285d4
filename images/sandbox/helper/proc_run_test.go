package main

// Background processes through the helper's spawn (spawn.go) and real shims (proc_run.go): the
// test binary runs as the shim when started with --proc-run (TestMain), as the helper binary does.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == procRunArg {
		runProcShim()
	}
	os.Exit(m.Run())
}

// newProcRegistry is a registry whose frames are discarded, with procsRoot in a temp dir.
func newProcRegistry(t *testing.T) *registry {
	t.Helper()
	old := procsRoot
	procsRoot = filepath.Join(t.TempDir(), "procs")
	t.Cleanup(func() { procsRoot = old })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	reg := newRegistry(newWriterTo(w))
	reg.sweep = nil // outside a sandbox the sweep would kill the user's other processes
	return reg
}

// spawnScript starts `sh -c script` as process id; S and K as given.
func spawnScript(t *testing.T, reg *registry, id, script string, size, keep int64, pty *ptySize) (string, spawnResult) {
	t.Helper()
	dir := filepath.Join(procsRoot, id)
	res, err := reg.spawn(procConfig{
		Dir: dir, Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C"},
		SegmentBytes: size, KeepSegments: keep, Pty: pty,
	})
	if err != nil {
		t.Fatalf("spawn %s: %v", id, err)
	}
	t.Cleanup(func() {
		// A failed test may leave its command waiting for a request that will not come: end it
		// (its group; the shim then writes exit.json and exits).
		if _, err := os.Stat(filepath.Join(dir, "exit.json")); t.Failed() && err != nil {
			_ = syscall.Kill(-res.CommandPid, syscall.SIGKILL)
		}
	})
	return dir, res
}

// waitExit waits for exit.json (at most 20 s).
func waitExit(t *testing.T, dir string) exitRecord {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "exit.json"))
		if err == nil {
			var rec exitRecord
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatalf("exit.json %q: %v", b, err)
			}
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exit.json in %s after 20 s (output %q)", dir, output(t, dir))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// segmentNames lists out/ in segment order.
func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(names[i])
		b, _ := strconv.Atoi(names[j])
		return a < b
	})
	return names
}

// output is the kept output: the segments' bytes in order.
func output(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	for _, name := range segmentNames(t, dir) {
		b, _ := os.ReadFile(filepath.Join(dir, "out", name))
		sb.Write(b)
	}
	return sb.String()
}

// waitOutput waits until the output holds want.
func waitOutput(t *testing.T, dir, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(output(t, dir), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never held %q", output(t, dir), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// request writes in/<seq>.<kind> as the controller does: a temp file in in/, then rename.
func request(t *testing.T, dir string, seq int, kind, content string) {
	t.Helper()
	name := fmt.Sprintf("%016d.%s", seq, kind)
	tmp := filepath.Join(dir, "in", "."+name+".warden-0123456789ab.tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "in", name)); err != nil {
		t.Fatal(err)
	}
}

// A spawn answers the shim's pid and start time (as /proc has them) and the command's pid; the
// directory is 0700 with out/0 (empty) and in/; the shim is in the keep set until it exits.
func TestSpawnAnswersAndRegistersTheShim(t *testing.T) {
	reg := newProcRegistry(t)
	dir, res := spawnScript(t, reg, "p1", "read x; echo got $x", 0, 0, nil)
	_, e, ok := procStat("/proc", res.Pid)
	if !ok || e.start != res.StartTime || res.CommandPid <= 0 || res.CommandPid == res.Pid {
		t.Fatalf("answer %+v; /proc has start %d (found %v)", res, e.start, ok)
	}
	if !runsProcRun("/proc", res.Pid) {
		t.Fatalf("the shim %d does not run %v", res.Pid, shimArgv)
	}
	if _, cmd, _ := procStat("/proc", res.CommandPid); cmd.ppid != res.Pid {
		t.Fatalf("the command's parent is %d, not the shim %d", cmd.ppid, res.Pid)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("dir: %v %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "out", "0")); err != nil || st.Size() != 0 {
		t.Fatalf("out/0: %v %v", st, err)
	}
	// 7 measured (proc_run.go's shimThreads); a busy host may make the runtime start a few more.
	threads, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", res.Pid))
	if len(threads) > 12 {
		t.Fatalf("the shim runs %d threads", len(threads))
	}
	t.Logf("shim threads: %d", len(threads))
	reg.mu.Lock()
	kept := reg.keep[res.Pid]
	reg.mu.Unlock()
	if kept != res.StartTime {
		t.Fatalf("keep set %v lacks the shim %d", reg.keep, res.Pid)
	}
	request(t, dir, 1, "data", "hello\n")
	if rec := waitExit(t, dir); rec.Code != 0 || output(t, dir) != "got hello\n" {
		t.Fatalf("exit %+v, output %q", rec, output(t, dir))
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		reg.mu.Lock()
		_, still := reg.keep[res.Pid]
		reg.mu.Unlock()
		if !still {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exited shim stayed in the keep set")
		}
	}
}

// Output goes to segments of S bytes, only the last K kept: 3893 bytes at S 1000, K 2 leave out/2
// (1000 bytes) and out/3 (893), the stream's bytes from 2000 on; exit.json has the code, the
// stream's length and no dropped byte.
func TestShimOutputSegmentsAndExit(t *testing.T) {
	reg := newProcRegistry(t)
	started := time.Now()
	dir, _ := spawnScript(t, reg, "p1", "seq 1 1000; exit 7", 1000, 2, nil)
	rec := waitExit(t, dir)
	var want strings.Builder
	for i := 1; i <= 1000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if want.Len() != 3893 {
		t.Fatalf("seq's output is %d bytes", want.Len())
	}
	if got := segmentNames(t, dir); strings.Join(got, ",") != "2,3" {
		t.Fatalf("segments %v, want [2 3]", got)
	}
	if got := output(t, dir); got != want.String()[2000:] {
		t.Fatalf("segments hold %d bytes, not the stream's from 2000", len(got))
	}
	st, _ := os.Stat(filepath.Join(dir, "out", "2"))
	if st.Size() != 1000 {
		t.Fatalf("out/2 has %d bytes", st.Size())
	}
	if rec.Code != 7 || rec.Signal != 0 || rec.OutputBytes != 3893 || rec.DroppedBytes != 0 {
		t.Fatalf("exit.json %+v", rec)
	}
	if rec.EndedAt < started.UnixNano()/1e6 || rec.EndedAt > time.Now().UnixNano()/1e6 {
		t.Fatalf("endedAt %d is not between the spawn and now", rec.EndedAt)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "exit.json"))
	if strings.Contains(string(raw), "signal") {
		t.Fatalf("exit.json of a normal exit names a signal: %s", raw)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Fatalf("the process's dir holds %v; want exit.json, in and out (the reserve renamed)", entries)
	}
}

// A death by signal is 128+N with the signal; signal requests go to the command's process group.
func TestShimSignalsAndDeathBySignal(t *testing.T) {
	reg := newProcRegistry(t)
	self, _ := spawnScript(t, reg, "self", "kill -TERM $$", 0, 0, nil)
	trapped, _ := spawnScript(t, reg, "trap", "trap 'echo got-USR1; exit 3' USR1; echo ready; while :; do sleep 0.05; done", 0, 0, nil)
	killed, _ := spawnScript(t, reg, "kill", "echo ready; sleep 30", 0, 0, nil)
	if rec := waitExit(t, self); rec.Code != 143 || rec.Signal != 15 {
		t.Fatalf("kill -TERM $$: exit.json %+v, want code 143 signal 15", rec)
	}
	waitOutput(t, trapped, "ready\n")
	request(t, trapped, 1, "signal", "USR1\n")
	// The whole group gets it: sh's sleep dies of it too (sh may say so).
	if rec := waitExit(t, trapped); rec.Code != 3 || !strings.HasSuffix(output(t, trapped), "got-USR1\n") {
		t.Fatalf("USR1: exit.json %+v, output %q", rec, output(t, trapped))
	}
	waitOutput(t, killed, "ready\n")
	started := time.Now()
	request(t, killed, 1, "signal", "KILL")
	if rec := waitExit(t, killed); rec.Code != 137 || rec.Signal != 9 || time.Since(started) > 5*time.Second {
		t.Fatalf("KILL: exit.json %+v after %v", rec, time.Since(started))
	}
	for _, dir := range []string{self, trapped, killed} {
		if left, _ := os.ReadDir(filepath.Join(dir, "in")); len(left) != 0 {
			t.Fatalf("%s/in still holds %d files", dir, len(left))
		}
	}
}

// Data is written in order and eof closes stdin; a command that does not read its stdin does not
// stall a signal behind a blocked write (1 MiB does not fit in the pipe).
func TestShimInputAndUnstalledSignals(t *testing.T) {
	reg := newProcRegistry(t)
	cat, _ := spawnScript(t, reg, "cat", "cat; echo done", 0, 0, nil)
	request(t, cat, 1, "data", "one\n")
	request(t, cat, 2, "data", "two\n")
	request(t, cat, 3, "eof", "")
	request(t, cat, 4, "data", "after eof\n")
	if rec := waitExit(t, cat); rec.Code != 0 || output(t, cat) != "one\ntwo\ndone\n" {
		t.Fatalf("exit.json %+v, output %q", rec, output(t, cat))
	}
	deaf, _ := spawnScript(t, reg, "deaf", "echo ready; sleep 30", 0, 0, nil)
	waitOutput(t, deaf, "ready\n")
	request(t, deaf, 1, "data", strings.Repeat("x", 1<<20))
	time.Sleep(200 * time.Millisecond)
	started := time.Now()
	request(t, deaf, 2, "signal", "TERM")
	if rec := waitExit(t, deaf); rec.Code != 143 || time.Since(started) > 5*time.Second {
		t.Fatalf("TERM behind a blocked write: exit.json %+v after %v", rec, time.Since(started))
	}
}

// Background children are killed with the command once the grace is over; exit.json is written
// only after the tree is gone.
func TestShimKillsTheTreeAtTheEnd(t *testing.T) {
	reg := newProcRegistry(t)
	dir, res := spawnScript(t, reg, "tree", "setsid sh -c 'sleep 30' </dev/null >/dev/null 2>&1 & sleep 30 >/dev/null & echo $!; exit 0", 0, 0, nil)
	rec := waitExit(t, dir)
	if rec.Code != 0 {
		t.Fatalf("exit.json %+v", rec)
	}
	for _, p := range readProcs("/proc") {
		if p.ppid == res.Pid {
			t.Fatalf("a child of the shim outlived exit.json")
		}
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(output(t, dir)))
	if state, _, ok := procStat("/proc", pid); ok && state != "Z" {
		t.Fatalf("the background sleep %d is still alive (%s)", pid, state)
	}
}

// Under a PTY the command's stdin is a terminal of the asked size; a resize changes it and eof
// types the EOF character.
func TestShimPTY(t *testing.T) {
	reg := newProcRegistry(t)
	dir, _ := spawnScript(t, reg, "pty", "test -t 0 && echo is-a-tty; stty size; read line; stty size; cat; echo cat-ended", 0, 0, &ptySize{Cols: 80, Rows: 24})
	waitOutput(t, dir, "is-a-tty\r\n24 80\r\n")
	request(t, dir, 1, "resize", "100 30")
	request(t, dir, 2, "data", "\n")
	waitOutput(t, dir, "30 100\r\n")
	request(t, dir, 3, "data", "typed\n")
	request(t, dir, 4, "eof", "")
	if rec := waitExit(t, dir); rec.Code != 0 || !strings.HasSuffix(output(t, dir), "typed\r\ntyped\r\ncat-ended\r\n") {
		t.Fatalf("exit.json %+v, output %q", rec, output(t, dir))
	}
}

// A command that cannot start is an error with the shim's errno; nothing is left behind.
func TestSpawnErrors(t *testing.T) {
	reg := newProcRegistry(t)
	before := readProcs("/proc")
	cases := []struct {
		name  string
		cfg   procConfig
		errno string
	}{
		{"missing argv[0]", procConfig{Argv: []string{"no-such-program-warden"}, Env: []string{"PATH=/usr/bin:/bin"}}, "ENOENT"},
		{"missing path", procConfig{Argv: []string{"/no/such/program"}}, "ENOENT"},
		{"missing cwd", procConfig{Argv: []string{"true"}, Cwd: "/no/such/dir", Env: []string{"PATH=/usr/bin:/bin"}}, "ENOENT"},
		{"empty argv", procConfig{}, "EINVAL"},
		{"bad pty", procConfig{Argv: []string{"true"}, Pty: &ptySize{Cols: 0, Rows: 24}}, "EINVAL"},
	}
	for i, c := range cases {
		c.cfg.Dir = filepath.Join(procsRoot, "e"+strconv.Itoa(i))
		_, err := reg.spawn(c.cfg)
		if err == nil || errnoName(err) != c.errno {
			t.Fatalf("%s: error %v (%s), want %s", c.name, err, errnoName(err), c.errno)
		}
		if _, serr := os.Stat(c.cfg.Dir); !os.IsNotExist(serr) {
			t.Fatalf("%s: the directory was left (%v)", c.name, serr)
		}
	}
	if _, err := reg.spawn(procConfig{Dir: "/tmp/elsewhere", Argv: []string{"true"}}); errnoName(err) != "EINVAL" {
		t.Fatalf("a dir outside procsRoot: %v", err)
	}
	if _, err := reg.spawn(procConfig{Dir: filepath.Join(procsRoot, "Bad_Id"), Argv: []string{"true"}}); errnoName(err) != "EINVAL" {
		t.Fatalf("a bad id: %v", err)
	}
	existing := filepath.Join(procsRoot, "exists")
	if err := os.MkdirAll(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.spawn(procConfig{Dir: existing, Argv: []string{"true"}}); errnoName(err) != "EEXIST" {
		t.Fatalf("an existing dir: %v", err)
	}
	if _, err := os.Stat(existing); err != nil {
		t.Fatalf("the existing dir was removed: %v", err)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if len(reg.keep) != 0 || len(reg.spawning) != 0 {
		t.Fatalf("failed spawns left keep %v, spawning %v", reg.keep, reg.spawning)
	}
	// The shim of a failed spawn is reaped before spawn returns (abandonShim waits for its exit);
	// a live one would be a child of this process running --proc-run.
	for pid, p := range readProcs("/proc") {
		if _, old := before[pid]; !old && p.ppid == os.Getpid() && runsProcRun("/proc", pid) {
			t.Fatalf("a failed spawn's shim %d is still alive", pid)
		}
	}
}

// A read of /proc/<pid>/stat whose process ended after the open fails with ESRCH: the controller
// must see "not found" (the shim is gone), not an I/O error.
func TestErrnoNameOfAVanishedProcessIsENOENT(t *testing.T) {
	if got := errnoName(&os.PathError{Op: "read", Path: "/proc/1/stat", Err: syscall.ESRCH}); got != "ENOENT" {
		t.Fatalf("errnoName(ESRCH) = %s, want ENOENT", got)
	}
}

// The command never gets the shim's config and reply pipes (fds 3 and 4): they are closed at its
// exec, so a command cannot hold the reply open and stall the helper's spawn (attack-procs F5).
// No pipeline in the script: sh would hold the pipe's two fds while ls lists them.
func TestShimCommandGetsOnlyItsStdio(t *testing.T) {
	reg := newProcRegistry(t)
	dir, _ := spawnScript(t, reg, "fds", "ls /proc/$$/fd", 1<<20, 4, nil)
	waitExit(t, dir)
	// Only 3 and 4 are the shim's; others may come from `go test` itself outside a sandbox.
	fds := strings.Fields(output(t, dir))
	for _, fd := range fds {
		if fd == "3" || fd == "4" {
			t.Fatalf("the command holds the shim's fd %s (its fds: %v)", fd, fds)
		}
	}
	if len(fds) < 3 || fds[0] != "0" || fds[1] != "1" {
		t.Fatalf("the command's fds: %v, want 0, 1, 2 among them", fds)
	}
}

// A symlink where the processes' directory should be is refused, naming it (attack-procs F8):
// the process's files would land where it points.
func TestSpawnRefusesASymlinkedProcsRoot(t *testing.T) {
	reg := newProcRegistry(t)
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(procsRoot); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(real, procsRoot); err != nil {
		t.Fatal(err)
	}
	_, err := reg.spawn(procConfig{Dir: filepath.Join(procsRoot, "p1"), Argv: []string{"true"}})
	if errnoName(err) != "EINVAL" || !strings.Contains(err.Error(), procsRoot+" is not a directory") {
		t.Fatalf("spawn under a symlinked procs root: %v (%s), want EINVAL naming %s", err, errnoName(err), procsRoot)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 0 {
		t.Fatalf("files written through the symlink: %v", entries)
	}
}
