package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

const fileModeChildEnv = "WARDEN_HELPER_TEST_FILEMODE_DIR"

// Installed (the Docker helper's filter), each call of this architecture that takes a mode, raw:
// a mode with the set-user-ID bit, the set-group-ID bit or both fails with EPERM and leaves no
// such bit (and, for the creating calls, no file); ordinary modes (0644, 0755, a directory's 1777,
// a FIFO's 0644) work; open/openat without O_CREAT ignore the mode; openat2 and io_uring_setup
// fail with ENOSYS. Then the commands: `chmod 4755`, `chmod u+s`, `chmod g+s` on a directory,
// `install -m 4755`, `mkdir -m 2755` fail with their exact messages; `chmod +x`, `mkdir -p`, `cp -a`
// and `tar x` of an ordinary tree work. Run in a child process: a filter cannot be removed.
func TestFileModeFilter(t *testing.T) {
	dir, child := inChild(t, "TestFileModeFilter", fileModeChildEnv, "fileModeChild: done")
	if child {
		fileModeChild(dir)
	}
}

// fileModeNrs are this architecture's numbers (0: the architecture has no such call).
type fileModeNrs struct{ chmod, fchmod, creat, mkdir, mknod, open, fchmodat, mkdirat, mknodat, openat uintptr }

func fileModeNumbers() fileModeNrs {
	if runtime.GOARCH == "arm64" {
		return fileModeNrs{0, 52, 0, 0, 0, 0, 53, 34, 33, 56}
	}
	return fileModeNrs{90, 91, 85, 83, 133, 2, 268, 258, 259, 257}
}

func fileModeChild(dir string) {
	fail := func(format string, args ...interface{}) {
		logf("fileModeChild: "+format, args...)
		os.Exit(1)
	}
	path := func(name string) (string, uintptr) {
		p := filepath.Join(dir, name)
		b, err := syscall.BytePtrFromString(p)
		if err != nil {
			fail("%v", err)
		}
		return p, uintptr(unsafe.Pointer(b))
	}
	const atFdcwdPtr = ^uintptr(99) // AT_FDCWD, -100
	nr := fileModeNumbers()
	f, fp := path("f")
	if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o644); err != nil {
		fail("%v", err)
	}
	// fchmodat2 (Linux 6.6): where the kernel or an outer profile lacks it, its live checks are skipped.
	_, _, e := syscall.Syscall6(nrFchmodat2, atFdcwdPtr, fp, 0o644, 0, 0, 0)
	haveFchmodat2 := e == 0
	if err := installSeccompFilter(false); err != nil {
		fail("installSeccompFilter: %v", err)
	}
	fd, err := syscall.Open(f, syscall.O_RDONLY, 0)
	if err != nil {
		fail("%v", err)
	}
	defer syscall.Close(fd)
	modeOf := func(p string) uint32 {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return 0xffffffff
		}
		return st.Mode & 0o7777
	}
	type call struct {
		name string
		run  func(mode uintptr) syscall.Errno
	}
	sys := func(n uintptr, args ...uintptr) syscall.Errno {
		a := append(args, 0, 0, 0, 0, 0, 0)
		_, _, errno := syscall.Syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5])
		return errno
	}
	changing := []call{
		{"fchmod", func(m uintptr) syscall.Errno { return sys(nr.fchmod, uintptr(fd), m) }},
		{"fchmodat", func(m uintptr) syscall.Errno { return sys(nr.fchmodat, atFdcwdPtr, fp, m, 0) }},
	}
	if nr.chmod != 0 {
		changing = append(changing, call{"chmod", func(m uintptr) syscall.Errno { return sys(nr.chmod, fp, m) }})
	}
	if haveFchmodat2 {
		changing = append(changing, call{"fchmodat2", func(m uintptr) syscall.Errno { return sys(nrFchmodat2, atFdcwdPtr, fp, m, 0) }})
	}
	for _, c := range changing {
		for _, m := range []uintptr{0o4755, 0o2755, 0o6755, 0o4000, 0xdead<<32 | 0o4755} {
			if errno := c.run(m); errno != syscall.EPERM || modeOf(f) != 0o644 {
				fail("%s(%#o): %v, mode %#o; want EPERM and 0644", c.name, m, errno, modeOf(f))
			}
		}
		for _, m := range []uintptr{0o755, 0o644} {
			if errno := c.run(m); errno != 0 || modeOf(f) != uint32(m) {
				fail("%s(%#o): %v, mode %#o", c.name, m, errno, modeOf(f))
			}
		}
	}
	// The creating calls: each name is new, so a refused call must leave nothing behind.
	n := 0
	creating := []call{
		{"openat O_CREAT", func(m uintptr) syscall.Errno {
			_, p := path(fmt.Sprint("c", n))
			return sys(nr.openat, atFdcwdPtr, p, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, m)
		}},
		{"mkdirat", func(m uintptr) syscall.Errno {
			_, p := path(fmt.Sprint("c", n))
			return sys(nr.mkdirat, atFdcwdPtr, p, m)
		}},
		{"mknodat", func(m uintptr) syscall.Errno {
			_, p := path(fmt.Sprint("c", n))
			return sys(nr.mknodat, atFdcwdPtr, p, syscall.S_IFREG|m, 0)
		}},
	}
	if nr.open != 0 {
		creating = append(creating,
			call{"open O_CREAT", func(m uintptr) syscall.Errno {
				_, p := path(fmt.Sprint("c", n))
				return sys(nr.open, p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_RDWR|syscall.O_CLOEXEC, m)
			}},
			call{"creat", func(m uintptr) syscall.Errno { _, p := path(fmt.Sprint("c", n)); return sys(nr.creat, p, m) }},
			call{"mkdir", func(m uintptr) syscall.Errno { _, p := path(fmt.Sprint("c", n)); return sys(nr.mkdir, p, m) }},
			call{"mknod", func(m uintptr) syscall.Errno {
				_, p := path(fmt.Sprint("c", n))
				return sys(nr.mknod, p, syscall.S_IFREG|m, 0)
			}})
	}
	syscall.Umask(0)
	for _, c := range creating {
		for _, m := range []uintptr{0o4755, 0o2755, 0o6755, 0o2000} {
			n++
			p, _ := path(fmt.Sprint("c", n))
			if errno := c.run(m); errno != syscall.EPERM || modeOf(p) != 0xffffffff {
				fail("%s(%#o): %v, mode %#o; want EPERM and no file", c.name, m, errno, modeOf(p))
			}
		}
		for _, m := range []uintptr{0o755, 0o644} {
			n++
			p, _ := path(fmt.Sprint("c", n))
			if errno := c.run(m); errno != 0 && errno != syscall.EBADF || modeOf(p) != uint32(m) {
				fail("%s(%#o): %v, mode %#o", c.name, m, errno, modeOf(p))
			}
		}
	}
	// A directory may be sticky (1777); a FIFO is made with an ordinary mode.
	d, dp := path("sticky")
	if errno := sys(nr.mkdirat, atFdcwdPtr, dp, 0o755); errno != 0 {
		fail("mkdirat sticky: %v", errno)
	}
	if errno := sys(nr.fchmodat, atFdcwdPtr, dp, 0o1777, 0); errno != 0 || modeOf(d) != 0o1777 {
		fail("fchmodat 01777 on a directory: %v, mode %#o", errno, modeOf(d))
	}
	_, fifo := path("fifo")
	if errno := sys(nr.mknodat, atFdcwdPtr, fifo, syscall.S_IFIFO|0o644, 0); errno != 0 {
		fail("mknodat FIFO 0644: %v", errno)
	}
	// Without O_CREAT the mode is not read: an open of an existing file with set-ID bits in it works.
	if errno := sys(nr.openat, atFdcwdPtr, fp, syscall.O_RDONLY, 0o4755); errno != 0 {
		fail("openat O_RDONLY with mode 04755: %v", errno)
	}
	if errno := sys(nrOpenat2, atFdcwdPtr, fp, 0, 0); errno != syscall.ENOSYS {
		fail("openat2: %v, want ENOSYS", errno)
	}
	var params [120]byte
	if errno := sys(nrIoUringSetup, 1, uintptr(unsafe.Pointer(&params))); errno != syscall.ENOSYS {
		fail("io_uring_setup: %v, want ENOSYS", errno)
	}
	syscall.Umask(0o022)
	fileModeCommands(dir, fail)
	os.Stdout.WriteString("fileModeChild: done\n")
}

// fileModeCommands runs coreutils and tar under the filter (installed in this process, kept
// across fork and execve).
func fileModeCommands(dir string, fail func(string, ...interface{})) {
	sh := func(script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for script, want := range map[string]string{
		"cp f s1 && chmod 4755 s1": "chmod: changing permissions of 's1': Operation not permitted\n",
		"cp f s2 && chmod u+s s2":  "chmod: changing permissions of 's2': Operation not permitted\n",
		"mkdir g1 && chmod g+s g1": "chmod: changing permissions of 'g1': Operation not permitted\n",
		"install -m 4755 f s3":     "install: cannot change permissions of 's3': Operation not permitted\n",
		"mkdir -m 2755 g2":         "mkdir: cannot create directory 'g2': Operation not permitted\n",
	} {
		if out, err := sh(script); err == nil || out != want {
			fail("%s: %v %q, want exit status 1 and %q", script, err, out, want)
		}
	}
	if out, err := sh("ls -ld s1 s2 s3 g1 | grep -c '^...[sS]\\|^......[sS]'"); strings.TrimSpace(out) != "0" {
		fail("set-ID bits left: %v %q", err, out)
	}
	script := "cp f x && chmod +x x && ./x && mkdir -p t/a/b && echo 1 > t/a/b/one && chmod 1777 t/a && " +
		"cp -a t t2 && tar cf t.tar t && mkdir u && tar xf t.tar -C u && tar xpf t.tar -C u && " +
		"stat -c %a x t2/a u/t/a u/t/a/b/one"
	if out, err := sh(script); err != nil || out != "755\n1777\n1777\n644\n" {
		fail("ordinary modes: %v %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "g2")); !errors.Is(err, os.ErrNotExist) {
		fail("mkdir -m 2755 left g2: %v", err)
	}
}
