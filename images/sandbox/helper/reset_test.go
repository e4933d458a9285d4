package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestResetStateRespawnsOnlyAfterARequest(t *testing.T) {
	var r resetState
	if r.childExited() {
		t.Fatal("a child exit without a reset request must end the container")
	}
	r.request()
	r.request()
	if !r.childExited() {
		t.Fatal("a child exit after a reset request must start a new child")
	}
	if r.childExited() {
		t.Fatal("two requests before one exit are one reset; the next exit ends the container")
	}
}

// The controller re-attaches with --reset to version 2 and later (src/sandbox/adopt.ts), and uses
// the exec-stream channel of Kubernetes (--init, --channel) from version 3, which caps file
// sizes (fsize.go) from version 4 and refuses the preallocation ioctls (seccomp.go) from version 5
// (src/sandbox/kubernetes/start-pod.ts EXEC_CHANNEL_VERSION); the Docker channel's switch onto a
// unix socket (socket.go) is version 6; the user-namespace filter on every runtime (userns.go),
// which the Kubernetes backend also requires, is version 7; the file-mode filter (filemode.go) and
// `--seccomp-exec`, which the docker-exec path of an rw sandbox requires
// (src/sandbox/docker-exec/seccomp-wrap.ts), are version 8; background processes (the spawn and
// keep frames, `--proc-run`, spawn.go and proc_run.go) are version 9.
func TestVersionAnnouncesResetAndExecChannel(t *testing.T) {
	if v, err := strconv.Atoi(version); err != nil || v != 9 {
		t.Fatalf("version = %q; want 9 (reset since 2, --init and --channel since 3, their file-size cap since 4, the ioctl filter since 5, the socket switch since 6, the user-namespace filter since 7, the file-mode filter and --seccomp-exec since 8, background processes since 9)", version)
	}
}

func TestKeptStdioIsCloseOnExec(t *testing.T) {
	kept := keepStdio()
	for i, f := range kept {
		fd := int(f.Fd())
		if fd <= 2 {
			t.Fatalf("stdio %d was not copied (fd %d): a reset's child would get /dev/null", i, fd)
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC == 0 {
			t.Fatalf("kept stdio %d (fd %d) is not close-on-exec: commands would inherit the channel", i, fd)
		}
		_ = f.Close()
	}
}

// fakeProc writes /proc/<pid>/{stat,cmdline} entries under a temp dir.
func fakeProc(t *testing.T, procs map[string][2]string) string {
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, "stat"), []byte(pid+" "+p[0]+"\n"), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "cmdline"), []byte(p[1]), 0o644)
	}
	return root
}

func TestResetIsHonouredOnlyForADockerExecAsker(t *testing.T) {
	helper := "/usr/local/bin/warden-helper\x00--reset\x00"
	cases := []struct {
		name  string
		procs map[string][2]string
		want  bool
	}{
		{"docker exec asker", map[string][2]string{
			"1": {"(warden-helper) S 0 1", "/usr/local/bin/warden-helper\x00"},
			"9": {"(warden-helper) S 0 9", helper},
		}, true},
		{"a sandbox command (parent inside the container)", map[string][2]string{
			"9": {"(warden-helper) S 7 9", helper},
		}, false},
		{"a docker exec process running something else", map[string][2]string{
			"9": {"(sh) S 0 9", "sh\x00-c\x00kill -USR1 1\x00"},
		}, false},
		{"comm with a ') 0' trick", map[string][2]string{
			"9": {"(x) S 0 (y) S 5 9", helper},
		}, false},
		{"no asker", map[string][2]string{
			"1": {"(warden-helper) S 0 1", helper},
		}, false},
	}
	for _, c := range cases {
		if got := resetAsked(fakeProc(t, c.procs)); got != c.want {
			t.Errorf("%s: resetAsked = %v, want %v", c.name, got, c.want)
		}
	}
}
