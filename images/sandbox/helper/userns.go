// The user-namespace part of the helper's seccomp filter (seccomp.go; protocol version 7). A
// process in a new user namespace holds every capability inside it: `unshare -Urm` then mounts a
// tmpfs, and such a namespace opens the kernel code that checks only ns_capable() (mount, netfilter,
// BPF-less packet sockets) to a sandbox that has no capability at all. runc's sandboxes were
// refused already by the runtime's own seccomp profile (Docker's default profile and containerd's
// RuntimeDefault allow unshare(2) and setns(2) only with CAP_SYS_ADMIN, clone(2) only without a
// namespace flag, and answer clone3(2) with ENOSYS: moby/profiles seccomp/default_linux.go), but
// gVisor serves system calls in its own kernel and does not load the container's profile by
// default (runsc --oci-seccomp is off), so there `unshare -U` and clone(CLONE_NEWUSER) succeeded.
//
// So the filter every command runs under, on every runtime (the Kubernetes channel, channel.go,
// and the Docker helper, main.go), refuses:
//   - unshare(2) and clone(2) with CLONE_NEWUSER in their flags (the first argument on every
//     architecture the filter knows; only s390 puts clone's flags second) with EPERM, as a
//     kernel without unprivileged user namespaces answers; other flags pass (without a capability
//     every other namespace flag fails in the kernel with EPERM anyway);
//   - setns(2) with EPERM, whatever the namespace type (entering one is never needed here);
//   - clone3(2) with ENOSYS: its flags live in a struct behind a pointer that seccomp cannot read,
//     so the call cannot be judged; ENOSYS (not EPERM) makes glibc (2.34+: pthread_create,
//     posix_spawn) fall back to clone(2), which is judged. Docker's default profile answers
//     clone3 the same way (moby/profiles seccomp/default_linux.go, "clone3" with ErrnoRet ENOSYS),
//     as do systemd's RestrictNamespaces= (src/shared/seccomp-util.c) and Chromium's baseline
//     policy (crbug.com/1213452).
package main

// cloneNewUser is CLONE_NEWUSER (linux/sched.h).
const cloneNewUser = 0x10000000

// nrClone3 is clone3(2): one number on every architecture.
const nrClone3 = 435

// seccompDataArg0Low is the low 32 bits of seccomp_data.args[0] on a little-endian kernel: the
// flags of clone(2) and unshare(2). CLONE_NEWUSER lies in them, and both calls read the flags
// as an unsigned long whose upper bits carry no namespace flag.
const seccompDataArg0Low = 16

// usernsCalls are the numbers of clone(2), unshare(2) and setns(2) per seccomp_data.arch
// (the syscall tables of x86_64 (x32 aliases beside), i386, arm64 and arm EABI).
var usernsCalls = map[uint32]struct{ clone, unshare, setns []uint32 }{
	auditArchX86_64: {
		[]uint32{56, 56 | x32SyscallBit}, []uint32{272, 272 | x32SyscallBit}, []uint32{308, 308 | x32SyscallBit},
	},
	auditArchI386:    {[]uint32{120}, []uint32{310}, []uint32{346}},
	auditArchAarch64: {[]uint32{220}, []uint32{97}, []uint32{268}},
	auditArchArm:     {[]uint32{120}, []uint32{337}, []uint32{375}},
}

// usernsChecks returns, for arch, the jumps of the calls above: clone and unshare to "newuser"
// (judged by their flags), setns to "eperm", clone3 (and its x32 alias) to "enosys".
func usernsChecks(arch uint32) []bpfIns {
	calls := usernsCalls[arch]
	var prog []bpfIns
	for _, nr := range append(append([]uint32{}, calls.clone...), calls.unshare...) {
		prog = append(prog, bpfJeq(nr, "newuser", ""))
	}
	for _, nr := range calls.setns {
		prog = append(prog, bpfJeq(nr, "eperm", ""))
	}
	prog = append(prog, bpfJeq(nrClone3, "enosys", ""))
	if arch == auditArchX86_64 {
		prog = append(prog, bpfJeq(nrClone3|x32SyscallBit, "enosys", ""))
	}
	return prog
}
