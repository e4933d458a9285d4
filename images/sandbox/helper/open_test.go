package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within runs op and fails the test when it has not returned in 2 s (an open blocked on a FIFO).
func within(t *testing.T, what string, op func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Second):
		t.Fatalf("%s still blocked after 2 s", what)
		return nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantTagged fails unless err is the tagged error errno with message msg.
func wantTagged(t *testing.T, err error, errno, msg string) {
	t.Helper()
	var tagged *taggedError
	if !errors.As(err, &tagged) || tagged.errno != errno || tagged.msg != msg {
		t.Fatalf("got %v, want %s %q", err, errno, msg)
	}
}

// A FIFO nobody writes to: read refuses it at once with the non-regular-file error, instead of
// blocking in open(2) for ever (and holding one of the fileOpSlots).
func TestReadRefusesFIFOPromptly(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	mkfifo(t, fifo)
	for _, req := range []readRequest{
		{Path: fifo, Kind: "bytes", Length: 10},
		{Path: fifo, Kind: "lines", StartLine: 1, MaxLines: 10, MaxBytes: 100},
	} {
		err := within(t, "read of a FIFO", func() error { _, _, err := readFile(req); return err })
		wantTagged(t, err, "EINVAL", fifo+" is not a regular file")
	}
}

// A symlink to a FIFO is refused the same way (open follows it, O_NONBLOCK still applies).
func TestReadRefusesSymlinkToFIFO(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "f"))
	link := filepath.Join(dir, "l")
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	err := within(t, "read through a link to a FIFO", func() error {
		_, _, err := readFile(readRequest{Path: link, Kind: "bytes", Length: 1})
		return err
	})
	wantTagged(t, err, "EINVAL", link+" is not a regular file")
}

// A regular file reads as before, through a descriptor that blocks again (O_NONBLOCK cleared);
// a directory is still EISDIR.
func TestReadRegularFileAndDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, data, err := readFile(readRequest{Path: path, Kind: "lines", StartLine: 2, MaxLines: 5, MaxBytes: 100, CountLines: true})
	if err != nil || string(data) != "two\n" || res.TotalBytes != 8 || res.Newlines != 2 || !res.EndsWithNewline {
		t.Fatalf("got %+v %q %v", res, data, err)
	}
	f, _, err := openRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 || flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("flags 0x%x (errno %v): O_NONBLOCK still set", flags, errno)
	}
	_, _, err = readFile(readRequest{Path: dir, Kind: "bytes", Length: 1})
	if !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("got %v, want EISDIR", err)
	}
}

// ls of a FIFO is "not a directory" at once.
func TestListDirRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	mkfifo(t, fifo)
	err := within(t, "ls of a FIFO", func() error { _, err := listDir(fifo); return err })
	wantTagged(t, err, "NOTDIR", fifo+" is not a directory")
}

// untar over a FIFO already at an entry's path fails at once instead of blocking in open(2)
// for a reader; the other entries are unaffected.
func TestUntarRefusesFIFOAtTarget(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "f"))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"ok", "f"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	err := within(t, "untar onto a FIFO", func() error { return untar(dir, buf.Bytes()) })
	if err == nil {
		t.Fatal("untar wrote through a FIFO")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "ok")); string(got) != "hi" {
		t.Fatalf("ok holds %q", got)
	}
}

// write replaces a FIFO with a regular file (a new file renamed over it), never opening it.
func TestWriteReplacesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	mkfifo(t, fifo)
	if err := within(t, "write to a FIFO", func() error { return writeFile(fifo, []byte("x"), nil) }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || !st.Mode().IsRegular() || st.Size() != 1 {
		t.Fatalf("got %v %v", st, err)
	}
}
