// The seccomp filter of every command. Its user-namespace part (version 7, userns.go), its
// file-mode part (version 8, filemode.go) and its refusal of io_uring_setup (version 8: an
// io_uring's operations never pass through the filter) are on every runtime: the Docker helper
// (main.go), the Kubernetes channel and, for docker exec, `--seccomp-exec` (seccomp_exec.go)
// install them. Its allocation part
// is the Kubernetes channel's alone (protocol version 4; its ioctl part from version 5), the second
// half of its file-size cap (fsize.go): RLIMIT_FSIZE bounds a file's size, not its allocated blocks:
// `fallocate -n -l 256M /dev/termination-log` (FALLOC_FL_KEEP_SIZE) allocates 256 MiB of the
// node's disk while the file's size stays 0, so the cap never applies (an attack found this with
// a 16 MiB cap). fallocate(2) without KEEP_SIZE is bounded by the cap, but it needs no writes,
// so nothing short of refusing the call keeps its blocks off the node either way.
//
// So, right after the cap and before it serves, the channel installs a seccomp filter on itself
// that makes fallocate(2) fail with EOPNOTSUPP. glibc's
// posix_fallocate then falls back to writing (bounded by the cap); util-linux `fallocate` calls
// fallocate(2) directly and fails with "Operation not supported". The other ways into
// vfs_fallocate are refused too: io_uring_setup(2) fails with ENOSYS (callers fall back to plain
// calls): an io_uring could issue IORING_OP_FALLOCATE, which never passes through the filter; and
// ioctl(2) with a preallocation command (allocIoctls: FS_IOC_RESVSP, a second attack took 256 MiB
// through it) fails with EOPNOTSUPP. What else reaches the node file's blocks is bounded by the
// cap: write, pwrite, truncate, copy_file_range, sendfile and splice check RLIMIT_FSIZE, and
// shared mappings fault pages only below the file's size; madvise(MADV_REMOVE) only frees
// (FALLOC_FL_PUNCH_HOLE); posix_fadvise allocates nothing. SECCOMP_FILTER_FLAG_TSYNC puts the
// filter on every thread of the Go runtime, and fork and execve keep it, so every command gets it
// and none can remove it. Every call neither part names is allowed.
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
	seccompRetEperm        = seccompRetErrno | uint32(syscall.EPERM)
	seccompRetAllow        = 0x7fff0000
	prSetNoNewPrivs        = 38

	// io_uring_setup has one number on every architecture.
	nrIoUringSetup = 425

	// struct seccomp_data: nr at 0, arch at 4, args[6] (u64 each) from 16. The low 32 bits of
	// args[1] (ioctl's cmd) are at 24 on a little-endian kernel: amd64 and arm64, the only
	// architectures seccompSyscall accepts.
	seccompDataNr      = 0
	seccompDataArch    = 4
	seccompDataArg1Low = 24
)

// archCalls are the numbers of fallocate(2), io_uring_setup(2) and ioctl(2) per
// seccomp_data.arch. x86_64 lists each number with its x32 alias, and x32's own ioctl (514,
// compat_sys_ioctl).
var archCalls = []struct {
	arch      uint32
	fallocate []uint32
	ioUring   []uint32
	ioctl     []uint32
}{
	{auditArchX86_64, []uint32{285, 285 | x32SyscallBit}, []uint32{nrIoUringSetup, nrIoUringSetup | x32SyscallBit},
		[]uint32{16, 16 | x32SyscallBit, 514 | x32SyscallBit}},
	{auditArchI386, []uint32{324}, []uint32{nrIoUringSetup}, []uint32{54}},
	{auditArchAarch64, []uint32{47}, []uint32{nrIoUringSetup}, []uint32{29}},
	{auditArchArm, []uint32{352}, []uint32{nrIoUringSetup}, []uint32{54}},
}

// allocIoctls are the ioctl(2) commands that allocate (or free) a file's blocks through
// vfs_fallocate, or did so in older kernels, without a write: fs/ioctl.c's ioctl_preallocate and,
// for 32-bit callers on x86_64 (i386, x32), compat_ioctl_preallocate, whose struct space_resv_32
// is 44 bytes, not 48, so each command has a second number. The compat path also takes the
// native numbers (do_vfs_ioctl), so every architecture refuses both sets. XFS's ALLOCSP/FREESP
// (removed in Linux 5.17) set blocks of an XFS file the same way. The kernel reads cmd as an
// unsigned int: the filter compares only the low 32 bits of the argument, so upper bits set by a
// 64-bit caller change nothing.
var allocIoctls = []uint32{
	0x40305828, 0x402c5828, // FS_IOC_RESVSP, FS_IOC_RESVSP_32 (_IOW('X', 40, struct space_resv))
	0x40305829, 0x402c5829, // FS_IOC_UNRESVSP, _32 (FALLOC_FL_PUNCH_HOLE)
	0x4030582a, 0x402c582a, // FS_IOC_RESVSP64, _32
	0x4030582b, 0x402c582b, // FS_IOC_UNRESVSP64, _32
	0x40305839, 0x402c5839, // FS_IOC_ZERO_RANGE, _32 (FALLOC_FL_ZERO_RANGE)
	0x4030580a, 0x402c580a, // XFS_IOC_ALLOCSP, _32
	0x4030580b, 0x402c580b, // XFS_IOC_FREESP, _32
	0x40305824, 0x402c5824, // XFS_IOC_ALLOCSP64, _32
	0x40305825, 0x402c5825, // XFS_IOC_FREESP64, _32
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
	return 0, fmt.Errorf("no seccomp filter for architecture %s (only amd64 and arm64)", runtime.GOARCH)
}

// seccompFilter returns the classic BPF program: per known arch, the user-namespace checks
// (usernsChecks: clone and unshare with CLONE_NEWUSER and setns → EPERM, clone3 → ENOSYS), the
// file-mode checks (fileModeChecks: a mode with the set-user-ID or set-group-ID bit → EPERM,
// openat2 → ENOSYS; left out with refuseAlloc, see below), io_uring_setup → ENOSYS and, with
// refuseAlloc (the Kubernetes channel), fallocate → EOPNOTSUPP, ioctl with a command of
// allocIoctls → EOPNOTSUPP; anything else allowed; an unknown arch → kill the process.
// The Kubernetes channel leaves the file-mode checks out: a Pod's workspace volume is set-group-ID
// (fsGroup) and GNU chmod keeps a directory's set-group-ID bit, so every chmod of a workspace
// directory would fail; and a Kubernetes sandbox has only the copy workspace mode, whose files
// reach a host through apply, which writes permission bits only.
func seccompFilter(refuseAlloc bool) []syscall.SockFilter {
	prog := []bpfIns{bpfLoad(seccompDataArch)}
	for i, a := range archCalls {
		next := "kill"
		if i+1 < len(archCalls) {
			next = fmt.Sprintf("arch%d", i+1)
		}
		prog = append(prog, labeled(fmt.Sprintf("arch%d", i), bpfJeq(a.arch, "", next)), bpfLoad(seccompDataNr))
		prog = append(prog, usernsChecks(a.arch)...)
		if !refuseAlloc {
			prog = append(prog, fileModeChecks(a.arch)...)
		}
		for _, nr := range a.ioUring {
			prog = append(prog, bpfJeq(nr, "enosys", ""))
		}
		if refuseAlloc {
			for _, nr := range a.fallocate {
				prog = append(prog, bpfJeq(nr, "eopnotsupp", ""))
			}
			for _, nr := range a.ioctl {
				prog = append(prog, bpfJeq(nr, "ioctl", ""))
			}
		}
		prog = append(prog, bpfRet(seccompRetAllow))
	}
	prog = append(prog, fileModeBlocks()...)
	prog = append(prog,
		labeled("kill", bpfRet(seccompRetKillProcess)),
		labeled("newuser", bpfLoad(seccompDataArg0Low)),
		bpfJset(cloneNewUser, "eperm", ""),
		bpfRet(seccompRetAllow),
		labeled("ioctl", bpfLoad(seccompDataArg1Low)))
	for _, cmd := range allocIoctls {
		prog = append(prog, bpfJeq(cmd, "eopnotsupp", ""))
	}
	prog = append(prog,
		labeled("allow", bpfRet(seccompRetAllow)),
		labeled("eopnotsupp", bpfRet(seccompRetErrno|uint32(syscall.EOPNOTSUPP))),
		labeled("eperm", bpfRet(seccompRetEperm)),
		labeled("enosys", bpfRet(seccompRetErrno|uint32(syscall.ENOSYS))))
	out, err := assemble(prog)
	if err != nil {
		panic(err) // the program above is fixed: a test assembles it
	}
	return out
}

// installSeccompFilter sets no_new_privs and installs seccompFilter(refuseAlloc) on every thread
// of this process (SECCOMP_FILTER_FLAG_TSYNC); an error says which step failed.
func installSeccompFilter(refuseAlloc bool) error {
	nr, err := seccompSyscall()
	if err != nil {
		return err
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	prog := seccompFilter(refuseAlloc)
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
