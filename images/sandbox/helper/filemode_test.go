package main

import (
	"syscall"
	"testing"
)

// The flags of open(2) and openat(2) the decisions below use (x86_64, arm64 and arm agree).
const (
	oRdonly  = 0
	oWronly  = 0o1
	oRdwr    = 0o2
	oCreat   = 0o100
	oExcl    = 0o200
	oTrunc   = 0o1000
	oTmpfile = 0o20000000 | 0o200000 // __O_TMPFILE | O_DIRECTORY
	atFdcwd  = 0xffffff9c            // AT_FDCWD (-100) as the kernel reads an int
)

// setidModes are modes the filter refuses (each set-ID bit alone, both, with and without
// permission bits and a file type, with upper bits a 64-bit caller may leave in the register);
// plainModes are modes it allows (the sticky bit included).
var (
	setidModes = []uint64{0o4755, 0o2755, 0o6755, 0o4000, 0o2000, 0o6777, 0o104755, 0xffffffff00000000 | 0o4755}
	plainModes = []uint64{0o755, 0o644, 0o777, 0o1777, 0, 0o100644, 0o10644, 0xffffffff00000000 | 0o755}
)

// On every architecture the filter knows, without the allocation part (Docker's exec paths): each
// call that takes a mode (x32 aliases too) refuses a mode with the set-user-ID or set-group-ID bit
// with EPERM and allows ordinary modes; open and openat judge the mode only when their flags
// create (O_CREAT, O_TMPFILE); openat2 and io_uring_setup fail with ENOSYS. With it (the
// Kubernetes channel) the file-mode part is left out: TestFileModeFilterOffOnKubernetes.
func TestFileModeFilterDecisions(t *testing.T) {
	eperm := uint32(seccompRetEperm)
	enosys := uint32(seccompRetErrno | uint32(syscall.ENOSYS))
	for _, refuseAlloc := range []bool{false} {
		prog := seccompFilter(refuseAlloc)
		for _, a := range archCalls {
			calls, ok := modeCalls[a.arch]
			if !ok || len(calls.mode1) == 0 || len(calls.mode2) != 4 || len(calls.openat) != 1 {
				t.Fatalf("arch %#x: the mode calls are missing", a.arch)
			}
			check := func(what string, nr uint32, want uint32, args ...uint64) {
				t.Helper()
				if got := runFilter(t, prog, seccompData(a.arch, nr, args...)); got != want {
					t.Errorf("refuseAlloc %v arch %#x %s (nr %#x, args %#o): %#x, want %#x",
						refuseAlloc, a.arch, what, nr, args, got, want)
				}
			}
			nrs := func(list []uint32) []uint32 {
				if a.arch != auditArchX86_64 {
					return list
				}
				out := append([]uint32{}, list...)
				for _, nr := range list {
					out = append(out, nr|x32SyscallBit)
				}
				return out
			}
			for _, nr := range nrs(calls.mode1) {
				for _, m := range setidModes {
					check("mode1 set-ID", nr, eperm, 3, m)
				}
				for _, m := range plainModes {
					check("mode1 plain", nr, seccompRetAllow, 3, m)
				}
			}
			for _, nr := range nrs(calls.mode2) {
				for _, m := range setidModes {
					check("mode2 set-ID", nr, eperm, atFdcwd, 0x1000, m, 0)
					check("mode2 set-ID, set-ID in arg1", nr, eperm, atFdcwd, 0o4755, m, 0)
				}
				for _, m := range plainModes {
					check("mode2 plain", nr, seccompRetAllow, atFdcwd, 0o6755, m, 0o6000)
				}
			}
			for _, nr := range nrs(calls.open) {
				for _, m := range setidModes {
					for _, fl := range []uint64{oCreat | oWronly, oCreat | oExcl | oRdwr | oTrunc, oTmpfile | oRdwr, 0xffffffff00000000 | oCreat} {
						check("open creating set-ID", nr, eperm, 0x1000, fl, m)
					}
					check("open, not creating", nr, seccompRetAllow, 0x1000, oRdonly, m)
					check("open O_TRUNC, not creating", nr, seccompRetAllow, 0x1000, oWronly|oTrunc, m)
				}
				for _, m := range plainModes {
					check("open creating plain", nr, seccompRetAllow, 0x1000, oCreat|oWronly, m)
				}
			}
			for _, nr := range nrs(calls.openat) {
				for _, m := range setidModes {
					for _, fl := range []uint64{oCreat | oWronly, oCreat | oExcl | oRdwr | oTrunc, oTmpfile | oRdwr, 0xffffffff00000000 | oCreat} {
						check("openat creating set-ID", nr, eperm, atFdcwd, 0x1000, fl, m)
					}
					check("openat, not creating", nr, seccompRetAllow, atFdcwd, 0x1000, oRdonly, m)
				}
				for _, m := range plainModes {
					check("openat creating plain", nr, seccompRetAllow, atFdcwd, 0x1000, oCreat|oWronly, m)
				}
			}
			check("openat2", nrOpenat2, enosys, atFdcwd, 0x1000, 0x2000, 24)
			check("io_uring_setup", nrIoUringSetup, enosys, 1, 0x1000)
			if a.arch == auditArchX86_64 {
				check("openat2 x32", nrOpenat2|x32SyscallBit, enosys, atFdcwd, 0x1000, 0x2000, 24)
			}
		}
	}
}

// The Kubernetes channel's filter allows set-ID modes (a Pod's set-group-ID workspace directories
// are chmod-ed with the bit kept by GNU chmod) and openat2, and still refuses io_uring_setup.
func TestFileModeFilterOffOnKubernetes(t *testing.T) {
	enosys := uint32(seccompRetErrno | uint32(syscall.ENOSYS))
	prog := seccompFilter(true)
	for _, a := range archCalls {
		calls := modeCalls[a.arch]
		for _, nr := range calls.mode1 {
			if got := runFilter(t, prog, seccompData(a.arch, nr, 3, 0o2755)); got != seccompRetAllow {
				t.Errorf("arch %#x nr %#x mode 02755: %#x, want allow", a.arch, nr, got)
			}
		}
		for _, nr := range calls.mode2 {
			if got := runFilter(t, prog, seccompData(a.arch, nr, atFdcwd, 0x1000, 0o4755, 0)); got != seccompRetAllow {
				t.Errorf("arch %#x nr %#x mode 04755: %#x, want allow", a.arch, nr, got)
			}
		}
		if got := runFilter(t, prog, seccompData(a.arch, nrOpenat2, atFdcwd, 0x1000, 0x2000, 24)); got != seccompRetAllow {
			t.Errorf("arch %#x openat2: %#x, want allow", a.arch, got)
		}
		if got := runFilter(t, prog, seccompData(a.arch, nrIoUringSetup, 1, 0x1000)); got != enosys {
			t.Errorf("arch %#x io_uring_setup: %#x, want ENOSYS", a.arch, got)
		}
	}
}
