package main

// The shim's parts in-process: output segments (proc_output.go) and the request queue
// (proc_input.go).

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// stream is n bytes that tell their offsets apart.
func stream(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte('a' + i%26)
	}
	return out
}

// segmentSizes maps each file of dir to its size.
func segmentSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		info, _ := e.Info()
		out[e.Name()] = info.Size()
	}
	return out
}

// S 10, K 3: 45 bytes in writes of 7, 13 and 25 leave out/2, 3 and 4 (10, 10, 5 bytes), the
// stream's bytes from 20 on; out/0 exists, empty, before the first byte.
func TestSegmentsKeepTheLastK(t *testing.T) {
	dir := t.TempDir()
	s, err := newSegments(dir, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := segmentSizes(t, dir); len(got) != 1 || got["0"] != 0 {
		t.Fatalf("before any output: %v, want out/0 empty", got)
	}
	data := stream(45)
	s.write(data[:7])
	s.write(data[7:20])
	if got := segmentSizes(t, dir); len(got) != 2 || got["0"] != 10 || got["1"] != 10 {
		t.Fatalf("after 20 bytes: %v, want 0 and 1 full (segment 2 starts with its first byte)", got)
	}
	s.write(data[20:])
	s.close()
	got := segmentSizes(t, dir)
	if len(got) != 3 || got["2"] != 10 || got["3"] != 10 || got["4"] != 5 {
		t.Fatalf("segments %v, want 2:10 3:10 4:5", got)
	}
	var kept []byte
	for _, name := range []string{"2", "3", "4"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		kept = append(kept, b...)
	}
	if string(kept) != string(data[20:]) || s.offset != 45 || s.dropped != 0 {
		t.Fatalf("kept %q, offset %d, dropped %d", kept, s.offset, s.dropped)
	}
}

// A failed write drops the bytes it could not write and counts them; the offset does not advance
// for them, so the next bytes continue the file where it ends.
func TestSegmentsCountDroppedBytes(t *testing.T) {
	dir := t.TempDir()
	s, err := newSegments(dir, 10, 8)
	if err != nil {
		t.Fatal(err)
	}
	full := true // segment 1 cannot be created while full is set (as with ENOSPC)
	s.open = func(path string) (*os.File, error) {
		if full && filepath.Base(path) == "1" {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
		}
		return openSegment(path)
	}
	data := stream(40)
	s.write(data[:14]) // 10 to segment 0, 4 dropped
	if s.offset != 10 || s.dropped != 4 {
		t.Fatalf("offset %d dropped %d, want 10 and 4", s.offset, s.dropped)
	}
	full = false
	s.write(data[14:20]) // segment 1 starts with these 6 bytes
	// A segment whose writes fail (/dev/full: ENOSPC) keeps what was written before.
	s.open = func(path string) (*os.File, error) {
		if filepath.Base(path) == "2" {
			return os.OpenFile("/dev/full", os.O_WRONLY, 0)
		}
		return openSegment(path)
	}
	s.write(data[20:40]) // 4 to segment 1, then 16 fail in segment 2
	s.close()
	if s.offset != 20 || s.dropped != 4+16 {
		t.Fatalf("offset %d dropped %d, want 20 and 20", s.offset, s.dropped)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "1"))
	if string(b) != string(data[14:24]) {
		t.Fatalf("segment 1 holds %q, want the 10 bytes written after the drop %q", b, data[14:24])
	}
}

// recorder is a procTarget that records what requests did.
type recorder struct{ events []string }

func (r *recorder) writeInput(p []byte) error {
	r.events = append(r.events, "data "+string(p))
	if string(p) == "fail" {
		return errors.New("broken pipe")
	}
	return nil
}
func (r *recorder) closeInput() error { r.events = append(r.events, "eof"); return nil }
func (r *recorder) signal(sig syscall.Signal) {
	r.events = append(r.events, "signal "+sig.String())
}
func (r *recorder) resize(cols, rows int) error {
	r.events = append(r.events, "resize "+strconv.Itoa(cols)+"x"+strconv.Itoa(rows))
	return nil
}

// drainWriter runs the writer's queue to its end, as writeLoop does.
func drainWriter(q *inputQueue) {
	for name := q.next(); name != ""; name = q.next() {
		q.write(name)
	}
}

// The initial scan handles requests in name order, whatever order they were written in: signals
// and resizes at once, data and eof through the writer in order; unknown names and bad contents
// are unlinked unhandled, temp files left alone; after a failed write data is dropped.
func TestRequestQueueOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"0000000000000003.data":                  "c",
		"0000000000000001.data":                  "a",
		"0000000000000005.resize":                "100 30\n",
		"0000000000000002.signal":                "USR1",
		"0000000000000004.eof":                   "",
		"0000000000000006.signal":                "BOGUS",
		"0000000000000007.resize":                "0 30",
		"junk":                                   "x",
		"000000000000008.data":                   "short seq",
		".0000000000000009.data.warden-ab12.tmp": "partial",
		"0000000000000010.data":                  "fail",
		"0000000000000011.data":                  "dropped",
		"0000000000000012.kill":                  "unknown kind",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	q := newQueue(dir, rec)
	q.scan()
	if got := strings.Join(rec.events, "|"); got != "signal user defined signal 1|resize 100x30" {
		t.Fatalf("scan did %q; want the signal, then the resize, at once", got)
	}
	drainWriter(q)
	want := "signal user defined signal 1|resize 100x30|data a|data c|eof|data fail"
	if got := strings.Join(rec.events, "|"); got != want {
		t.Fatalf("requests did %q, want %q", got, want)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != ".0000000000000009.data.warden-ab12.tmp" {
		t.Fatalf("left in in/: %v; want only the temp file", left)
	}
	// After the command's exit every request is unlinked unhandled.
	q.commandExited()
	_ = os.WriteFile(filepath.Join(dir, "0000000000000013.signal"), []byte("TERM"), 0o600)
	q.scan()
	if len(rec.events) != 6 {
		t.Fatalf("a signal after the exit was handled: %v", rec.events)
	}
	if _, err := os.Stat(filepath.Join(dir, "0000000000000013.signal")); !os.IsNotExist(err) {
		t.Fatalf("a request after the exit was not unlinked: %v", err)
	}
}

func TestRequestKind(t *testing.T) {
	for name, want := range map[string]string{
		"0000000000000001.data": "data", "0000000000000001.eof": "eof", "0000000000000001.signal": "signal",
		"0000000000000001.resize": "resize", "0000000000000001.Data": "", "000000000000001a.data": "",
		"00000000000000001.data": "", "0000000000000001.": "", "0000000000000001": "", ".0000000000000001.data": "",
	} {
		if got := requestKind(name); got != want {
			t.Errorf("requestKind(%q) = %q, want %q", name, got, want)
		}
	}
}
