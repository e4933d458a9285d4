// File-size cap of the Kubernetes channel (protocol version 4). The kubelet bind-mounts a file of
// the node's own disk at the container's terminationMessagePath (/dev/termination-log), writable
// by every user (mode 0666), and a process without capabilities can neither unmount nor chmod it:
// a command could write to the node's disk without bound there, past every limit of the Pod (its
// root filesystem is read-only, /workspace and /tmp are size-limited memory-backed emptyDirs).
//
// So the channel sets RLIMIT_FSIZE, soft and hard (an unprivileged process may lower a hard limit
// but never raise it), to the larger of the /workspace and /tmp tmpfs sizes before it serves;
// every command inherits it (fork and execve keep resource limits). No legitimate file is cut
// short, since no file there can be larger than its tmpfs, and the termination log is capped at
// that size. A write past it fails with EFBIG, and the writing command gets SIGXFSZ (default
// action: terminate); the helper's own Go runtime catches SIGXFSZ, so it sees only EFBIG.
// RLIMIT_FSIZE bounds a file's size, not its blocks: fallocate(2) with FALLOC_FL_KEEP_SIZE takes
// node disk at size 0, so the channel also refuses fallocate(2) with a seccomp filter (seccomp.go).
//
// The channel refuses to start (fails closed) when either directory is not a size-limited tmpfs.
// Under gVisor (RuntimeClass gvisor) an emptyDir is a gofer mount whose statfs reports the host's
// numbers with the 9p type, so a 9p mount with a size is taken as the host's tmpfs.
//
// Limits are per process and inherited: processes that the container runtime starts on its own
// (PID 1, an operator's `kubectl exec`) keep the container's limits (no file-size limit); the idle
// init applies the same cap to itself (idle.go), but it starts no process.
package main

import (
	"fmt"
	"syscall"
)

const (
	// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h TMPFS_MAGIC).
	tmpfsMagic = 0x01021994
	// v9fsMagic is statfs's f_type of a 9p mount (V9FS_MAGIC): gVisor's gofer mounts.
	v9fsMagic = 0x01021997
)

// cappedDirs are the writable areas of a Kubernetes sandbox (src/sandbox/kubernetes/pod-spec.ts).
var cappedDirs = []string{workspaceDir, "/tmp"}

// statfsFunc is syscall.Statfs's shape (a fake in tests).
type statfsFunc func(path string, st *syscall.Statfs_t) error

// fileSizeCap returns the largest size in bytes of the size-limited tmpfs mounts at dirs, or an
// error naming the first directory that is not one (statfs failed, another filesystem type, or
// no size: a tmpfs mounted with size=0 is unlimited).
func fileSizeCap(dirs []string, statfs statfsFunc) (uint64, error) {
	var largest uint64
	for _, dir := range dirs {
		var st syscall.Statfs_t
		if err := statfs(dir, &st); err != nil {
			return 0, fmt.Errorf("statfs %s: %w", dir, err)
		}
		if st.Type != tmpfsMagic && st.Type != v9fsMagic {
			return 0, fmt.Errorf("%s is not a tmpfs (filesystem type 0x%x)", dir, st.Type)
		}
		size := st.Blocks * uint64(st.Bsize)
		if size == 0 {
			return 0, fmt.Errorf("%s is a tmpfs without a size limit", dir)
		}
		if size > largest {
			largest = size
		}
	}
	return largest, nil
}

// capFileSize sets this process's RLIMIT_FSIZE, soft and hard, to maxBytes.
func capFileSize(maxBytes uint64) error {
	lim := syscall.Rlimit{Cur: maxBytes, Max: maxBytes}
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
}

// capSlackBytes is added to the largest tmpfs size: a command that fills a tmpfs with one file
// (an empty workspace, `dd if=/dev/zero of=/workspace/fill`) must get ENOSPC ("No space left on
// device") as without the cap, not SIGXFSZ because the file's end reached the cap exactly when
// the tmpfs was full (test/engine/tools/read-bash-ls.test.ts case 26 on Kubernetes).
const capSlackBytes = 1 << 20

// capChannelFileSize applies the cap of cappedDirs, plus capSlackBytes, to this process (so to
// every command it starts); an error says what is wrong with the Pod, or that setrlimit failed.
func capChannelFileSize() (uint64, error) {
	largest, err := fileSizeCap(cappedDirs, syscall.Statfs)
	if err != nil {
		return 0, fmt.Errorf("%w; a Kubernetes sandbox needs /workspace and /tmp on size-limited memory-backed emptyDirs (emptyDir.medium Memory with a sizeLimit)", err)
	}
	maxBytes := largest + capSlackBytes
	if err := capFileSize(maxBytes); err != nil {
		return 0, fmt.Errorf("setrlimit(RLIMIT_FSIZE, %d): %w", maxBytes, err)
	}
	return maxBytes, nil
}
