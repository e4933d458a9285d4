// Opening workspace files without blocking. open(2) of a FIFO blocks until the other end opens it
// (for ever, when nothing does), and a device may block or act on open: a command of the sandbox
// can put either at any path (mkfifo, a symlink to /dev/...). A file operation that blocked there
// would hold one of the fileOpSlots for good, and with all of them held every later read, stat
// or realpath of the session would wait (the policy resolves bash paths through them too). So
// every open of a path a command controls is O_NONBLOCK (a FIFO or a device opens at once or
// fails), checked with fstat, and refused unless it is the expected type; O_NONBLOCK is then
// cleared, so reads and writes of the regular file behave as before.
package main

import (
	"os"
	"syscall"
)

// openChecked opens path with flags|O_NONBLOCK|O_CLOEXEC (perm when it creates), then keeps it
// only when fstat's type is want (syscall.S_IFREG or S_IFDIR): a directory where a file is wanted
// is EISDIR, anything else the tagged EINVAL "<path> is not a regular file" (or NOTDIR). Returns
// the blocking file and its size in bytes.
func openChecked(path string, flags int, perm uint32, want uint32) (*os.File, int64, error) {
	fd, err := syscall.Open(path, flags|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, 0, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if typ := st.Mode & syscall.S_IFMT; typ != want {
		syscall.Close(fd)
		switch {
		case want == syscall.S_IFDIR:
			return nil, 0, &taggedError{"NOTDIR", path + " is not a directory"}
		case typ == syscall.S_IFDIR:
			return nil, 0, &os.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
		}
		return nil, 0, &taggedError{"EINVAL", path + " is not a regular file"}
	}
	if err := setBlocking(fd); err != nil {
		syscall.Close(fd)
		return nil, 0, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), st.Size, nil
}

// setBlocking clears O_NONBLOCK on fd.
func setBlocking(fd int) error {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return errno
	}
	_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, flags&^syscall.O_NONBLOCK)
	if errno != 0 {
		return errno
	}
	return nil
}
