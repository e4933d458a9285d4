// fallocate filter of the Kubernetes channel (protocol version 4), the second half of its
// file-size cap (fsize.go). RLIMIT_FSIZE bounds a file's size, not its allocated blocks:
// `fallocate -n -l 256M /dev/termination-log` (FALLOC_FL_KEEP_SIZE) allocates 256 MiB of the
// node's disk while the file's size stays 0, so the cap never applies (an attack found this with
// a 16 MiB cap). fallocate(2) without KEEP_SIZE is bounded by the cap, but it needs no writes,
// so nothing short of refusing the call keeps its blocks off the node either way.
//
// So, right after the cap and before it serves, the channel installs a seccomp filter on itself
// that makes fallocate(2) fail with EOPNOTSUPP and allows every other call. glibc's
// posix_fallocate then falls back to writing (bounded by the cap); util-linux `fallocate` calls
// fallocate(2) directly and fails with "Operation not supported". io_uring_setup(2) fails with
// ENOSYS (callers fall back to plain calls): an io_uring could issue IORING_OP_FALLOCATE, which
// never passes through the filter. SECCOMP_FILTER_FLAG_TSYNC puts the filter on every thread of
// the Go runtime, and fork and execve keep it, so every command gets it and none can remove it.
//
// The filter checks seccomp_data.arch: x86_64 (with the x32 alias of each number), i386, aarch64
// and arm (the compat modes of the two architectures the helper is built for); a call of any
// other architecture kills the process. A helper built for another architecture, or a kernel that
// refuses the filter, does not serve (fails closed).
package main

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// Linux ABI numbers (linux/audit.h, linux/seccomp.h, linux/prctl.h, the syscall tables).
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchArm     = 0x40000028
	x32SyscallBit    = 0x40000000

	seccompSetModeFilter   = 1
	seccompFilterFlagTsync = 1
	seccompRetKillProcess  = 0x80000000
	seccompRetErrno        = 0x00050000
	seccompRetAllow        = 0x7fff0000
	prSetNoNewPrivs        = 38

	// io_uring_setup has one number on every architecture.
	nrIoUringSetup = 425
)

// archCalls are the numbers of fallocate(2) and io_uring_setup(2) per seccomp_data.arch.
var archCalls = []struct {
	arch      uint32
	fallocate []uint32
	ioUring   []uint32
}{
	{auditArchX86_64, []uint32{285, 285 | x32SyscallBit}, []uint32{nrIoUringSetup, nrIoUringSetup | x32SyscallBit}},
	{auditArchI386, []uint32{324}, []uint32{nrIoUringSetup}},
	{auditArchAarch64, []uint32{47}, []uint32{nrIoUringSetup}},
	{auditArchArm, []uint32{352}, []uint32{nrIoUringSetup}},
}

// seccompSyscall returns the number of seccomp(2) on the architecture the helper was built for,
// or an error for one the filter was not written for.
func seccompSyscall() (uintptr, error) {
	switch runtime.GOARCH {
	case "amd64":
		return 317, nil
	case "arm64":
		return 277, nil
	}
	return 0, fmt.Errorf("no fallocate filter for architecture %s (only amd64 and arm64)", runtime.GOARCH)
}

// fallocateFilter returns the classic BPF program: per known arch, fallocate → EOPNOTSUPP,
// io_uring_setup → ENOSYS, anything else allowed; an unknown arch → kill the process.
func fallocateFilter() []syscall.SockFilter {
	stmt := func(code uint16, k uint32) syscall.SockFilter { return syscall.SockFilter{Code: code, K: k} }
	size := 2 // load arch, kill
	for _, a := range archCalls {
		size += 2 + len(a.fallocate) + len(a.ioUring)
	}
	allow, denyFallocate, denyIoUring := size, size+1, size+2
	prog := []syscall.SockFilter{stmt(syscall.BPF_LD|syscall.BPF_W|syscall.BPF_ABS, 4)} // arch
	jeq := func(k uint32, jt, jf int) syscall.SockFilter {
		here := len(prog)
		return syscall.SockFilter{Code: syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K, K: k,
			Jt: uint8(jt - here - 1), Jf: uint8(jf - here - 1)}
	}
	for _, a := range archCalls {
		next := len(prog) + 2 + len(a.fallocate) + len(a.ioUring)
		prog = append(prog, jeq(a.arch, len(prog)+1, next))
		prog = append(prog, stmt(syscall.BPF_LD|syscall.BPF_W|syscall.BPF_ABS, 0)) // nr
		for _, nr := range a.fallocate {
			prog = append(prog, jeq(nr, denyFallocate, len(prog)+1))
		}
		for i, nr := range a.ioUring {
			last := i == len(a.ioUring)-1
			miss := len(prog) + 1
			if last {
				miss = allow
			}
			prog = append(prog, jeq(nr, denyIoUring, miss))
		}
	}
	return append(prog,
		stmt(syscall.BPF_RET|syscall.BPF_K, seccompRetKillProcess),
		stmt(syscall.BPF_RET|syscall.BPF_K, seccompRetAllow),
		stmt(syscall.BPF_RET|syscall.BPF_K, seccompRetErrno|uint32(syscall.EOPNOTSUPP)),
		stmt(syscall.BPF_RET|syscall.BPF_K, seccompRetErrno|uint32(syscall.ENOSYS)))
}

// installFallocateFilter sets no_new_privs and installs fallocateFilter on every thread of this
// process (SECCOMP_FILTER_FLAG_TSYNC); an error says which step failed.
func installFallocateFilter() error {
	nr, err := seccompSyscall()
	if err != nil {
		return err
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	prog := fallocateFilter()
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := syscall.RawSyscall(nr, seccompSetModeFilter, seccompFilterFlagTsync, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): thread %d could not be synchronized", r)
	}
	return nil
}
