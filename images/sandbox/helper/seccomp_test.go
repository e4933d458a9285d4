package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

const (
	filterChildEnv = "WARDEN_HELPER_TEST_SECCOMP_DIR"
	fallocKeepSize = 1 // FALLOC_FL_KEEP_SIZE
)

// The filter refuses fallocate(2) with EOPNOTSUPP, with and without FALLOC_FL_KEEP_SIZE, and
// the preallocation ioctls (FS_IOC_RESVSP, RESVSP64, ZERO_RANGE, with and without upper bits in
// the command) with EOPNOTSUPP, leaving the file 0 blocks, in the process (every thread) and in a
// command it starts (util-linux fallocate's exact message), and io_uring_setup(2) with ENOSYS;
// ordinary writes work. Run in a child process: a filter cannot be
// removed.
func TestFallocateFilter(t *testing.T) {
	dir, child := inChild(t, "TestFallocateFilter", filterChildEnv, "filterChild: done")
	if child {
		filterChild(dir)
		return
	}
	st, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil || st.Size() != 4096 || st.Sys().(*syscall.Stat_t).Blocks > 8 {
		t.Fatalf("f: %v %v, want 4096 bytes in at most 8 blocks", st, err)
	}
}

func filterChild(dir string) {
	fail := func(format string, args ...interface{}) {
		logf("filterChild: "+format, args...)
		os.Exit(1)
	}
	if err := installSeccompFilter(true); err != nil {
		fail("installFallocateFilter: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	for _, mode := range []uint32{fallocKeepSize, 0} {
		if err := syscall.Fallocate(int(f.Fd()), mode, 0, 1<<20); !errors.Is(err, syscall.EOPNOTSUPP) {
			fail("fallocate mode %d: %v, want EOPNOTSUPP", mode, err)
		}
	}
	if err := preallocIoctls(f); err != nil {
		fail("%v", err)
	}
	if st, err := f.Stat(); err != nil || st.Sys().(*syscall.Stat_t).Blocks != 0 {
		fail("after the refused ioctls: %v %v, want 0 blocks", st, err)
	}
	if n, err := f.Write(make([]byte, 4096)); n != 4096 || err != nil {
		fail("write: %d %v", n, err)
	}
	var params [120]byte // struct io_uring_params
	if _, _, errno := syscall.Syscall(nrIoUringSetup, 1, uintptr(unsafe.Pointer(&params)), 0); errno != syscall.ENOSYS {
		fail("io_uring_setup: %v, want ENOSYS", errno)
	}
	// util-linux fallocate (the image's, and the build stage's) calls fallocate(2) directly.
	for flags, want := range map[string]string{
		"-n": "fallocate: fallocate failed: keep size mode is unsupported\n",
		"":   "fallocate: fallocate failed: Operation not supported\n",
	} {
		args := append(strings.Fields(flags), "-l", "1M", filepath.Join(dir, "f"))
		cmd := exec.Command("fallocate", args...)
		out, err := cmd.CombinedOutput()
		if err == nil || cmd.ProcessState.ExitCode() != 1 || string(out) != want {
			fail("fallocate %s: %v %q, want exit status 1 and %q", flags, err, out, want)
		}
	}
	os.Stdout.WriteString("filterChild: done\n")
}

func TestFallocateFilterJumpsStayInside(t *testing.T) {
	prog := seccompFilter(true)
	for i, ins := range prog {
		if ins.Code&0x07 == syscall.BPF_JMP && (i+1+int(ins.Jt) >= len(prog) || i+1+int(ins.Jf) >= len(prog)) {
			t.Fatalf("instruction %d jumps outside the %d-instruction program", i, len(prog))
		}
	}
	if last := prog[len(prog)-1]; last.Code != syscall.BPF_RET|syscall.BPF_K {
		t.Fatalf("last instruction %+v is not a return", last)
	}
}
