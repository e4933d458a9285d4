package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeStatfs answers statfs with the given type and size in 4 KiB blocks per directory.
func fakeStatfs(mounts map[string][2]uint64) statfsFunc {
	return func(path string, st *syscall.Statfs_t) error {
		m, ok := mounts[path]
		if !ok {
			return syscall.ENOENT
		}
		*st = syscall.Statfs_t{Bsize: 4096}
		st.Type = int64(m[0])
		st.Blocks = m[1]
		return nil
	}
}

func TestFileSizeCapIsTheLargerTmpfs(t *testing.T) {
	dirs := []string{"/workspace", "/tmp"}
	for _, typ := range []uint64{tmpfsMagic, v9fsMagic} {
		got, err := fileSizeCap(dirs, fakeStatfs(map[string][2]uint64{"/workspace": {typ, 16384}, "/tmp": {typ, 32768}}))
		if err != nil || got != 128<<20 {
			t.Fatalf("type 0x%x: got %d %v, want %d", typ, got, err, 128<<20)
		}
	}
}

func TestFileSizeCapRefusesWhatIsNotASizedTmpfs(t *testing.T) {
	dirs := []string{"/workspace", "/tmp"}
	cases := map[string]struct {
		mounts map[string][2]uint64
		want   string
	}{
		"disk":     {map[string][2]uint64{"/workspace": {0xef53, 1 << 20}, "/tmp": {tmpfsMagic, 1}}, "/workspace is not a tmpfs (filesystem type 0xef53)"},
		"unsized":  {map[string][2]uint64{"/workspace": {tmpfsMagic, 1}, "/tmp": {tmpfsMagic, 0}}, "/tmp is a tmpfs without a size limit"},
		"no mount": {map[string][2]uint64{"/workspace": {tmpfsMagic, 1}}, "statfs /tmp: no such file or directory"},
	}
	for name, c := range cases {
		if got, err := fileSizeCap(dirs, fakeStatfs(c.mounts)); err == nil || err.Error() != c.want {
			t.Fatalf("%s: got %d %v, want %q", name, got, err, c.want)
		}
	}
}

// capChild is the child process of TestCapFileSize: it caps itself at 1 MiB, then reports.
const capChildEnv = "WARDEN_HELPER_TEST_FSIZE_DIR"

// The cap binds the process (a write past it is EFBIG, after exactly the cap) and everything it
// starts: a command cannot raise it (`ulimit -f unlimited` fails) and one that writes past it
// is killed by SIGXFSZ, leaving exactly the cap on disk. Run in a child process: a lowered hard
// limit cannot be raised again.
func TestCapFileSize(t *testing.T) {
	dir, child := inChild(t, "TestCapFileSize", capChildEnv, "capChild: done")
	if child {
		capChild(dir)
		return
	}
	for _, name := range []string{"own", "dd"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() != 1<<20 {
			t.Fatalf("%s: %v %v, want exactly %d bytes", name, st, err, 1<<20)
		}
	}
}

func capChild(dir string) {
	fail := func(format string, args ...interface{}) {
		logf("capChild: "+format, args...)
		os.Exit(1)
	}
	if err := capFileSize(1 << 20); err != nil {
		fail("capFileSize: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, "own"))
	if err != nil {
		fail("%v", err)
	}
	n, err := f.Write(make([]byte, 1<<20+4096))
	f.Close()
	if n != 1<<20 || !errors.Is(err, syscall.EFBIG) {
		fail("own write: %d bytes, %v; want %d bytes and EFBIG", n, err, 1<<20)
	}
	// As the sandbox user: root (the image build runs these tests) may raise a hard limit.
	raise := exec.Command("sh", "-c", "ulimit -f unlimited")
	if os.Geteuid() == 0 {
		raise.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if out, err := raise.CombinedOutput(); err == nil {
		fail("ulimit -f unlimited succeeded: %s", out)
	}
	dd := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "dd"), "bs=64k", "count=32")
	err = dd.Run()
	status, ok := dd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ok || !status.Signaled() || status.Signal() != syscall.SIGXFSZ {
		fail("dd past the cap: %v, want killed by SIGXFSZ", err)
	}
	os.Stdout.WriteString("capChild: done\n")
}

// inChild runs test in a child process (this test binary again) with env set to a new temporary
// directory, and fails t unless the child exits 0 having printed done. In the child it returns
// that directory and true (the caller runs the child's part); in the parent, after the child,
// the directory and false. The child's status comes from the process's reaper (reaper.go): once
// an earlier test started it, it collects every child, so exec.Cmd's own wait would race it
// ("wait: no child processes").
func inChild(t *testing.T, test, env, done string) (string, bool) {
	if dir := os.Getenv(env); dir != "" {
		return dir, true
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	if out, ws := runReaped(t, cmd); ws.ExitStatus() != 0 || !strings.Contains(out, done) {
		t.Fatalf("child: exit status %d\n%s", ws.ExitStatus(), out)
	}
	return dir, false
}

// runReaped runs cmd with its stdout and stderr combined and waits for it through the helper's
// reaper: once a test made the reaper, its wait4(-1) may collect the child before os/exec's Wait
// could (which then reports exit -1).
func runReaped(t *testing.T, cmd *exec.Cmd) (string, syscall.WaitStatus) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w // *os.File: no copying goroutine that Wait would have to end
	exited := childReaper()
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	status := exited.watch(cmd.Process.Pid)
	_ = cmd.Process.Release()
	out, _ := io.ReadAll(r)
	return string(out), <-status
}
