package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// The preallocation ioctls the filter must refuse, as a 64-bit caller issues them (the compat
// _32 numbers and the other architectures are checked on the program itself below).
var preallocTests = []struct {
	name string
	cmd  uint32
}{
	{"FS_IOC_RESVSP", 0x40305828},
	{"FS_IOC_RESVSP64", 0x4030582a},
	{"FS_IOC_ZERO_RANGE", 0x40305839},
}

// spaceResv is struct space_resv (linux/falloc.h, 48 bytes): whence 0 (SEEK_SET), start 0, len.
func spaceResv(lenBytes int64) []byte {
	b := make([]byte, 48)
	binary.LittleEndian.PutUint64(b[16:], uint64(lenBytes))
	return b
}

// preallocIoctls issues each of preallocTests on f for 1 MiB, its command as is and with bits
// set above the low 32 (which the kernel ignores: cmd is an unsigned int), and returns an error
// unless every call failed with EOPNOTSUPP.
func preallocIoctls(f *os.File) error {
	arg := spaceResv(1 << 20)
	for _, c := range preallocTests {
		for _, cmd := range []uintptr{uintptr(c.cmd), uintptr(c.cmd) | 0xdead<<32} {
			_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), cmd, uintptr(unsafe.Pointer(&arg[0])))
			if errno != syscall.EOPNOTSUPP {
				return fmt.Errorf("ioctl %s (%#x): %v, want EOPNOTSUPP", c.name, cmd, errno)
			}
		}
	}
	return nil
}

// Without the filter the same ioctls do allocate here (so the filter test above proves the
// refusal, not a filesystem that lacks them); skipped where the filesystem refuses them.
func TestPreallocIoctlsAllocateWithoutFilter(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	arg := spaceResv(1 << 20)
	for _, c := range preallocTests[:2] {
		for _, cmd := range []uintptr{uintptr(c.cmd), uintptr(c.cmd) | 0xdead<<32} {
			if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), cmd, uintptr(unsafe.Pointer(&arg[0]))); errno != 0 {
				t.Skipf("ioctl %s (%#x) on %s: %v: this filesystem does not preallocate", c.name, cmd, f.Name(), errno)
			}
		}
	}
	st, _ := f.Stat()
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; st.Size() != 0 || blocks < 2048 {
		t.Fatalf("size %d, %d blocks: want 0 bytes and at least 1 MiB (2048 blocks) allocated", st.Size(), blocks)
	}
}

// seccompData is struct seccomp_data as the filter reads it (little-endian).
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], nr)
	binary.LittleEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// runFilter interprets prog (the loads, jeq, jset and returns seccompFilter uses) on data.
func runFilter(t *testing.T, prog []syscall.SockFilter, data []byte) uint32 {
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[ins.K:])
		case syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K:
			if acc == ins.K {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		case syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K:
			if acc&ins.K != 0 {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		case syscall.BPF_RET | syscall.BPF_K:
			return ins.K
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, ins.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// Every architecture the filter knows: each allocating ioctl command (native and _32 numbers,
// upper bits set or not) is refused with EOPNOTSUPP, fallocate too, io_uring_setup with ENOSYS;
// other ioctls (TCGETS, FIONREAD, FS_IOC_GETFLAGS, FS_IOC_FIEMAP) and calls are allowed; an unknown arch kills.
func TestFallocateFilterDecisions(t *testing.T) {
	prog := seccompFilter(true)
	eopnotsupp := uint32(seccompRetErrno | uint32(syscall.EOPNOTSUPP))
	enosys := uint32(seccompRetErrno | uint32(syscall.ENOSYS))
	if len(allocIoctls) != 18 {
		t.Fatalf("%d allocating ioctls, want 18", len(allocIoctls))
	}
	for _, a := range archCalls {
		check := func(what string, nr uint32, arg1 uint64, want uint32) {
			t.Helper()
			if got := runFilter(t, prog, seccompData(a.arch, nr, 3, arg1)); got != want {
				t.Errorf("arch %#x %s (nr %#x, arg1 %#x): %#x, want %#x", a.arch, what, nr, arg1, got, want)
			}
		}
		for _, nr := range a.ioctl {
			for _, cmd := range allocIoctls {
				check("ioctl", nr, uint64(cmd), eopnotsupp)
				check("ioctl, upper bits", nr, uint64(cmd)|0xffffffff00000000, eopnotsupp)
			}
			for _, cmd := range []uint64{0x5401, 0x541b, 0x80086601, 0xc020660b} {
				check("other ioctl", nr, cmd, seccompRetAllow)
			}
		}
		for _, nr := range a.fallocate {
			check("fallocate", nr, 0, eopnotsupp)
		}
		for _, nr := range a.ioUring {
			check("io_uring_setup", nr, 0, enosys)
		}
		check("nr 0", 0, 0x40305828, seccompRetAllow)
	}
	if got := runFilter(t, prog, seccompData(0x4000003e, 16, 3, 0x40305828)); got != seccompRetKillProcess {
		t.Errorf("unknown arch: %#x, want kill", got)
	}
}
