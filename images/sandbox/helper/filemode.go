// The file-mode part of the helper's seccomp filter (seccomp.go; protocol version 8). In an `rw`
// session /workspace is the host directory, bind-mounted, and the sandbox's uid is a host uid: a
// command that made its own file set-user-ID (`cp /bin/sh sh2 && chmod 4755 sh2`, no capability
// needed for one's own file) left a program on the host that any local user who can reach the
// directory runs as that uid (the container's nosuid covers execution inside it only). So no
// command may create a file with, or set, the set-user-ID or set-group-ID bit: every call that
// takes a mode refuses one with either bit with EPERM:
//   - chmod(2), fchmod(2), creat(2), mkdir(2), mknod(2): the mode is the second argument;
//   - fchmodat(2), fchmodat2(2), mkdirat(2), mknodat(2): the third;
//   - open(2) (flags second, mode third) and openat(2) (flags third, mode fourth), only when the
//     flags hold O_CREAT or __O_TMPFILE: the kernel reads the mode only then (fs/open.c
//     build_open_how, WILL_CREATE), and a caller may pass anything in it otherwise.
//
// A directory's set-group-ID bit goes too: chmod's mode does not say whether its file is a
// directory, and mkdir(2) drops both bits anyway (fs/namei.c vfs_mkdir), so coreutils' `mkdir -m
// 2755` sets it with a chmod afterwards. The kernel still gives a new directory the bit of a
// set-group-ID parent (inode_init_owner); a chmod that names the bit again, e.g. `cp -a` of such a
// directory, fails. The sticky bit passes (a file's means nothing on Linux; a directory's, 1777,
// is common). The filter reads the low 32 bits of each argument: the kernel reads the mode as an
// unsigned int (umode_t) and the flags as an int, so upper bits change nothing.
//
// Two ways around the checks are closed: openat2(2) takes its flags and mode in a struct behind a
// pointer that seccomp cannot read, so it fails with ENOSYS, as on a kernel before 5.6 (a caller
// that tries it first falls back to openat, which is judged; glibc's open never calls it); and
// io_uring_setup(2) fails with ENOSYS (seccomp.go): an io_uring's IORING_OP_OPENAT and MKDIRAT
// never pass through the filter.
package main

// modeSetidBits are S_ISUID | S_ISGID (linux/stat.h).
const modeSetidBits = 0o6000

// openCreateFlags are O_CREAT (0100 on every architecture the filter knows) and __O_TMPFILE
// (020000000): the flags with which open(2) and openat(2) use their mode argument.
const openCreateFlags = 0o100 | 0o20000000

// The low 32 bits of seccomp_data.args[2] and args[3] (little-endian, as seccompDataArg1Low).
const (
	seccompDataArg2Low = 32
	seccompDataArg3Low = 40
)

// openat2(2) and fchmodat2(2) have one number on every architecture (the unified table from
// Linux 5.6 and 6.6).
const (
	nrOpenat2   = 437
	nrFchmodat2 = 452
)

// modeCalls are the calls that take a mode, per seccomp_data.arch, by where their mode lies:
// mode1 (second argument), mode2 (third), open (open(2)'s layout), openat (openat(2)'s). The
// numbers are those of the syscall tables of x86_64 (x32 aliases added by fileModeChecks), i386,
// arm64 (which has only the *at calls) and arm EABI.
var modeCalls = map[uint32]struct{ mode1, mode2, open, openat []uint32 }{
	// chmod, fchmod, creat, mkdir, mknod | fchmodat, fchmodat2, mkdirat, mknodat | open | openat
	auditArchX86_64:  {[]uint32{90, 91, 85, 83, 133}, []uint32{268, nrFchmodat2, 258, 259}, []uint32{2}, []uint32{257}},
	auditArchI386:    {[]uint32{15, 94, 8, 39, 14}, []uint32{306, nrFchmodat2, 296, 297}, []uint32{5}, []uint32{295}},
	auditArchAarch64: {[]uint32{52}, []uint32{53, nrFchmodat2, 34, 33}, nil, []uint32{56}},
	auditArchArm:     {[]uint32{15, 94, 8, 39, 14}, []uint32{333, nrFchmodat2, 323, 324}, []uint32{5}, []uint32{322}},
}

// fileModeChecks returns, for arch, the jumps of the calls above to the blocks of fileModeBlocks,
// and openat2 to "enosys". x86_64 lists each number with its x32 alias (these calls are common to
// both ABIs).
func fileModeChecks(arch uint32) []bpfIns {
	calls := modeCalls[arch]
	alias := func(nrs []uint32) []uint32 {
		if arch != auditArchX86_64 {
			return nrs
		}
		out := append([]uint32{}, nrs...)
		for _, nr := range nrs {
			out = append(out, nr|x32SyscallBit)
		}
		return out
	}
	var prog []bpfIns
	for _, group := range []struct {
		label string
		nrs   []uint32
	}{
		{"mode1", calls.mode1}, {"mode2", calls.mode2}, {"open", calls.open}, {"openat", calls.openat},
		{"enosys", []uint32{nrOpenat2}},
	} {
		for _, nr := range alias(group.nrs) {
			prog = append(prog, bpfJeq(nr, group.label, ""))
		}
	}
	return prog
}

// fileModeBlocks are the shared blocks fileModeChecks jumps to: a mode with either set-ID bit →
// "eperm", else allowed; open and openat look at the mode only when the flags create.
func fileModeBlocks() []bpfIns {
	return []bpfIns{
		labeled("open", bpfLoad(seccompDataArg1Low)),
		bpfJset(openCreateFlags, "mode2", "allow"),
		labeled("openat", bpfLoad(seccompDataArg2Low)),
		bpfJset(openCreateFlags, "mode3", "allow"),
		labeled("mode1", bpfLoad(seccompDataArg1Low)),
		bpfJset(modeSetidBits, "eperm", "allow"),
		labeled("mode2", bpfLoad(seccompDataArg2Low)),
		bpfJset(modeSetidBits, "eperm", "allow"),
		labeled("mode3", bpfLoad(seccompDataArg3Low)),
		bpfJset(modeSetidBits, "eperm", "allow"),
	}
}
