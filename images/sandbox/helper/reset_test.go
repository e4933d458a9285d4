package main

import (
	"syscall"
	"testing"
)

func TestResetStateRespawnsOnlyAfterARequest(t *testing.T) {
	var r resetState
	if r.childExited() {
		t.Fatal("a child exit without a reset request must end the container")
	}
	r.request()
	r.request()
	if !r.childExited() {
		t.Fatal("a child exit after a reset request must start a new child")
	}
	if r.childExited() {
		t.Fatal("two requests before one exit are one reset; the next exit ends the container")
	}
}

func TestVersionAnnouncesReset(t *testing.T) {
	if version != "2" {
		t.Fatalf("version = %q; the controller re-attaches with --reset only to version 2", version)
	}
}

func TestKeptStdioIsCloseOnExec(t *testing.T) {
	kept := keepStdio()
	for i, f := range kept {
		fd := int(f.Fd())
		if fd <= 2 {
			t.Fatalf("stdio %d was not copied (fd %d): a reset's child would get /dev/null", i, fd)
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC == 0 {
			t.Fatalf("kept stdio %d (fd %d) is not close-on-exec: commands would inherit the channel", i, fd)
		}
		_ = f.Close()
	}
}
