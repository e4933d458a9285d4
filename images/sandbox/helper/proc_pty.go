// A background process's command under a pseudo-terminal, and what its requests do to it
// (proc_input.go's procTarget). The shim opens /dev/ptmx (the master), unlocks it, finds the
// slave's number (TIOCGPTN), opens /dev/pts/<n> and sets the size (TIOCSWINSZ); the command
// starts as the leader of a new session whose controlling terminal is the slave (its stdin,
// stdout and stderr), and the shim keeps only the master: output is read from it (EIO once no
// process holds the slave), input is written to it, a resize sets its size (the kernel sends
// SIGWINCH to the terminal's foreground process group), and eof writes the terminal's EOF
// character (VEOF, ^D unless the command changed it).
package main

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// termVEOF is the index of VEOF in termios' c_cc (asm-generic/termbits.h).
const termVEOF = 4

// openPTY opens a new pseudo-terminal of cols x rows: its master and its slave.
func openPTY(size ptySize) (*os.File, *os.File, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	var n uint32
	err = ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	if err == nil {
		err = ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n))
	}
	if err == nil {
		err = setWinsize(master, size.Cols, size.Rows)
	}
	if err != nil {
		_ = master.Close()
		return nil, nil, err
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		_ = master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// ioctl runs ioctl(2) on f's descriptor without taking it out of the runtime's poller (f.Fd()
// would make it blocking).
func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if cerr := raw.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	}); cerr != nil {
		return cerr
	}
	if errno != 0 {
		return os.NewSyscallError("ioctl", errno)
	}
	return nil
}

// setWinsize sets the terminal's size (struct winsize: rows, cols, then pixels).
func setWinsize(master *os.File, cols, rows int) error {
	ws := [4]uint16{uint16(rows), uint16(cols), 0, 0}
	return ioctl(master, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
}

// eofChar is the terminal's EOF character (^D when it cannot be read).
func eofChar(master *os.File) byte {
	var t syscall.Termios
	if err := ioctl(master, syscall.TCGETS, unsafe.Pointer(&t)); err != nil || t.Cc[termVEOF] == 0 {
		return 4
	}
	return t.Cc[termVEOF]
}

// startWithPTY starts the command as a session leader on a new pseudo-terminal.
func (s *shim) startWithPTY(path string) error {
	master, slave, err := openPTY(*s.cfg.Pty)
	if err != nil {
		return err
	}
	proc, err := os.StartProcess(path, s.cfg.Argv, &os.ProcAttr{
		Dir:   s.cfg.Cwd,
		Env:   s.cfg.Env,
		Files: []*os.File{slave, slave, slave},
		// Ctty is a descriptor of the child: its stdin.
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
	})
	slave.Close()
	if err != nil {
		master.Close()
		return startError(s.cfg.Argv[0], err)
	}
	s.pid, s.master, s.output = proc.Pid, master, master
	_ = proc.Release() // the shim reaps every child itself (reap)
	return nil
}

// writeInput writes to the command's stdin or terminal (blocking while it does not read).
func (s *shim) writeInput(p []byte) error {
	if s.master != nil {
		_, err := s.master.Write(p)
		return err
	}
	_, err := s.stdin.Write(p)
	return err
}

// closeInput closes the stdin pipe, or types the terminal's EOF character.
func (s *shim) closeInput() error {
	if s.master != nil {
		_, err := s.master.Write([]byte{eofChar(s.master)})
		return err
	}
	return s.stdin.Close()
}

// signal sends sig to the command's process group.
func (s *shim) signal(sig syscall.Signal) { _ = syscall.Kill(-s.pid, sig) }

// resize sets the terminal's size; with pipes there is none.
func (s *shim) resize(cols, rows int) error {
	if s.master == nil {
		return nil
	}
	return setWinsize(s.master, cols, rows)
}
