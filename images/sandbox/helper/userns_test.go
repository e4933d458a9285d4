package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

const usernsChildEnv = "WARDEN_HELPER_TEST_USERNS_DIR"

// On every architecture the filter knows, with and without the allocation part: clone and
// unshare with CLONE_NEWUSER (alone, with other flags, with upper bits set) and setns fail with
// EPERM, clone3 with ENOSYS; clone without it (fork, threads) and unshare of other namespaces pass
// (the kernel judges those by capability). The Docker helper's filter (no allocation part) allows
// fallocate and the preallocation ioctls, but not io_uring_setup (filemode.go).
func TestUsernsFilterDecisions(t *testing.T) {
	eperm := uint32(seccompRetErrno | uint32(syscall.EPERM))
	enosys := uint32(seccompRetErrno | uint32(syscall.ENOSYS))
	const sigchld, cloneThread = 17, 0x003d0f00 // SIGCHLD; glibc's thread flags (CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID)
	for _, refuseAlloc := range []bool{true, false} {
		prog := seccompFilter(refuseAlloc)
		for _, a := range archCalls {
			calls := usernsCalls[a.arch]
			if len(calls.clone) == 0 || len(calls.unshare) == 0 || len(calls.setns) == 0 {
				t.Fatalf("arch %#x: no user-namespace calls", a.arch)
			}
			check := func(what string, nr uint32, arg0 uint64, want uint32) {
				t.Helper()
				if got := runFilter(t, prog, seccompData(a.arch, nr, arg0, 0x40305828)); got != want {
					t.Errorf("refuseAlloc %v arch %#x %s (nr %#x, arg0 %#x): %#x, want %#x",
						refuseAlloc, a.arch, what, nr, arg0, got, want)
				}
			}
			for _, nr := range calls.clone {
				check("clone NEWUSER", nr, cloneNewUser|sigchld, eperm)
				check("clone NEWUSER|NEWNS", nr, cloneNewUser|0x00020000|sigchld, eperm)
				check("clone NEWUSER, upper bits", nr, 0xffffffff00000000|cloneNewUser, eperm)
				check("clone (fork)", nr, sigchld, seccompRetAllow)
				check("clone (thread)", nr, cloneThread, seccompRetAllow)
				check("clone, upper bits", nr, 0xffffffff00000000|sigchld, seccompRetAllow)
			}
			for _, nr := range calls.unshare {
				check("unshare NEWUSER", nr, cloneNewUser, eperm)
				check("unshare NEWUSER|NEWNS", nr, cloneNewUser|0x00020000, eperm)
				check("unshare NEWNS", nr, 0x00020000, seccompRetAllow)
			}
			for _, nr := range calls.setns {
				check("setns 0", nr, 0, eperm)
				check("setns NEWUSER", nr, cloneNewUser, eperm)
			}
			check("clone3", nrClone3, 0, enosys)
			if a.arch == auditArchX86_64 {
				check("clone3 x32", nrClone3|x32SyscallBit, 0, enosys)
			}
			if !refuseAlloc {
				check("fallocate", a.fallocate[0], 3, seccompRetAllow)
				check("io_uring_setup (refused everywhere since version 8)", a.ioUring[0], 1, enosys)
				if got := runFilter(t, prog, seccompData(a.arch, a.ioctl[0], 3, 0x40305828)); got != seccompRetAllow {
					t.Errorf("arch %#x ioctl RESVSP without the allocation part: %#x, want allow", a.arch, got)
				}
			}
		}
	}
}

// Installed (the Docker helper's filter): unshare(CLONE_NEWUSER), a command started with
// CLONE_NEWUSER and setns fail with EPERM, clone3 with ENOSYS, util-linux `unshare -U` fails with
// its exact message; commands start and fallocate works. Run in a child process: a filter cannot be
// removed.
func TestUsernsFilter(t *testing.T) {
	dir, child := inChild(t, "TestUsernsFilter", usernsChildEnv, "usernsChild: done")
	if child {
		usernsChild(dir)
	}
}

func usernsChild(dir string) {
	fail := func(format string, args ...interface{}) {
		logf("usernsChild: "+format, args...)
		os.Exit(1)
	}
	if err := installSeccompFilter(false); err != nil {
		fail("installSeccompFilter: %v", err)
	}
	if err := syscall.Unshare(cloneNewUser); !errors.Is(err, syscall.EPERM) {
		fail("unshare(CLONE_NEWUSER): %v, want EPERM", err)
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: cloneNewUser}
	if err := cmd.Run(); !errors.Is(err, syscall.EPERM) {
		fail("a command in a new user namespace: %v, want EPERM", err)
	}
	if _, _, errno := syscall.RawSyscall(uintptr(usernsSetns()), 0, 0, 0); errno != syscall.EPERM {
		fail("setns: %v, want EPERM", errno)
	}
	var args [88]byte // struct clone_args, flags 0: a plain fork if it ran
	if _, _, errno := syscall.RawSyscall(nrClone3, 0, uintptr(len(args)), 0); errno != syscall.ENOSYS {
		fail("clone3: %v, want ENOSYS", errno)
	}
	out, err := exec.Command("unshare", "-U", "true").CombinedOutput()
	if want := "unshare: unshare failed: Operation not permitted\n"; err == nil || string(out) != want {
		fail("unshare -U true: %v %q, want exit status 1 and %q", err, out, want)
	}
	if out, err := exec.Command("sh", "-c", "echo ok").Output(); err != nil || string(out) != "ok\n" {
		fail("sh -c 'echo ok': %v %q", err, out)
	}
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, 4096); err != nil && !errors.Is(err, syscall.EOPNOTSUPP) {
		fail("fallocate without the allocation part: %v", err)
	}
	os.Stdout.WriteString("usernsChild: done\n")
}

// usernsSetns is setns(2)'s number on the architecture the test runs on.
func usernsSetns() uint32 {
	nr, _ := seccompSyscall()
	if nr == 317 { // amd64
		return usernsCalls[auditArchX86_64].setns[0]
	}
	return usernsCalls[auditArchAarch64].setns[0]
}
