package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkTo makes a symlink to target in a fresh directory, as a command can in the workspace.
func linkTo(t *testing.T, target string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "p")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// A link to /proc/self/pagemap (size 0, gigabytes of content while the process lives): a line
// read that counts lines ends at the scan bound (size 0, proc's 0 bytes, plus 1 MiB) with the
// bound's error, instead of scanning for minutes while it holds a file-op slot.
func TestReadOfPagemapEndsAtTheScanBound(t *testing.T) {
	link := linkTo(t, "/proc/self/pagemap")
	for _, req := range []readRequest{
		{Path: link, Kind: "lines", StartLine: 1, MaxLines: 2000, MaxBytes: 50 << 10, CountLines: true},
		{Path: link, Kind: "lines", StartLine: 1 << 40, MaxLines: 1, MaxBytes: 1},
	} {
		err := within(t, "line read of /proc/self/pagemap", func() error { _, _, err := readFile(req); return err })
		wantTagged(t, err, "EINVAL", link+" gave more than 1048576 bytes, more than a stored file can hold"+
			" (its size was 0 bytes, its filesystem holds 0): it is a pseudo file such as /proc/<pid>/pagemap,"+
			" or it keeps growing; read a part of it with bash instead, e.g. head -c 65536 "+link)
	}
	// A byte range reads at most its length: nothing past the size (0).
	res, data, err := readFile(readRequest{Path: link, Kind: "bytes", Offset: 0, Length: 4096})
	if err != nil || res.TotalBytes != 0 || len(data) != 0 {
		t.Fatalf("bytes read of pagemap: %v %d bytes, total %d", err, len(data), res.TotalBytes)
	}
}

// A small pseudo file (size 0 too) reads whole, counted, as a regular file does.
func TestReadOfSmallProcFileWorks(t *testing.T) {
	link := linkTo(t, "/proc/self/status")
	req := readRequest{Path: link, Kind: "lines", StartLine: 1, MaxLines: 1, MaxBytes: 1 << 20, CountLines: true}
	res, data, err := readFile(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "Name:") || !res.Counted || res.Newlines < 10 {
		t.Fatalf("got %q, %+v", data, res)
	}
}

// zeros is an endless reader of zero bytes (/dev/zero without the device).
type zeros struct{ read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	z.read += int64(len(p))
	return len(p), nil
}

// The bound is exact: a stream of exactly limit bytes scans to its end; one of limit+1 bytes
// fails, and an endless one stops after at most one chunk past the limit.
func TestScanLinesBound(t *testing.T) {
	req := readRequest{StartLine: 1, MaxLines: 1, MaxBytes: 10, CountLines: true}
	const limit = 3<<20 + 5
	data := bytes.Repeat([]byte("a\n"), limit/2)
	data = append(data, 'x')
	bound := &scanLimitError{limit: limit}
	out, newlines, eof, err := scanLines(bytes.NewReader(data), req, bound)
	if err != nil || !eof || newlines != limit/2 || string(out) != "a\n" {
		t.Fatalf("exactly the limit: %q %d %v %v", out, newlines, eof, err)
	}
	_, _, _, err = scanLines(bytes.NewReader(append(data, 'y')), req, bound)
	var over *scanLimitError
	if !errors.As(err, &over) || over.limit != limit {
		t.Fatalf("one past the limit: %v", err)
	}
	z := &zeros{}
	_, _, _, err = scanLines(io.Reader(z), req, bound)
	if !errors.As(err, &over) || z.read > limit+scanChunkBytes {
		t.Fatalf("endless: %v after %d bytes", err, z.read)
	}
}
