package main

import (
	"os"
	"os/exec"
	"testing"
)

// `warden-helper --seccomp-exec sh -c …` (the test binary stands in for the helper: main's
// dispatch is one line) runs the program under the filter: `chmod 4755` of its own file fails
// with the exact message and leaves 0644, `chmod +x` works, `unshare -U` fails; the program's
// exit status and environment pass through; no program or a missing one: exit 126.
func TestSeccompExec(t *testing.T) {
	if os.Getenv("WARDEN_HELPER_TEST_SECCOMP_EXEC") == "1" {
		for i, a := range os.Args {
			if a == "--" {
				runSeccompExec(os.Args[i+1:])
			}
		}
		os.Exit(125)
	}
	dir := t.TempDir()
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"-test.run", "^TestSeccompExec$", "--"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WARDEN_HELPER_TEST_SECCOMP_EXEC=1", "LC_ALL=C", "PROBE=kept")
		out, ws := runReaped(t, cmd)
		return out, ws.ExitStatus()
	}
	script := "echo x > f && chmod 644 f; chmod 4755 f; stat -c %a f; chmod +x f && stat -c %a f; " +
		"unshare -U true; echo $PROBE; exit 7"
	want := "chmod: changing permissions of 'f': Operation not permitted\n644\n755\n" +
		"unshare: unshare failed: Operation not permitted\nkept\n"
	if out, code := run("sh", "-c", script); out != want || code != 7 {
		t.Fatalf("--seccomp-exec sh -c …: exit %d %q, want 7 and %q", code, out, want)
	}
	if out, code := run("/nonexistent/prog", "a", "b"); code != 126 {
		t.Fatalf("--seccomp-exec of a missing program: exit %d %q, want 126", code, out)
	}
}
