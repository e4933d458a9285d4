// A background process's output in segment files (proc_run.go): out/<n> (n in decimal, from 0)
// holds the stream's bytes [n*S, (n+1)*S), S = segmentBytes. out/0 exists (empty) from the start;
// segment n > 0 is started by its first byte, and then out/<n-K> is unlinked (K = keepSegments),
// so the last K segments are kept. A write that fails (ENOSPC when /tmp is full, EFBIG past the
// Kubernetes file-size cap, a segment that cannot be created) drops the bytes it could not write
// and counts them (dropped); the stream's offset advances only by the bytes written, so a reader
// never finds a hole: out/<n>'s bytes are always the stream's from n*S on.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// segments writes one output stream; only the shim's output pump calls write.
type segments struct {
	dir  string
	size int64 // S
	keep int64 // K
	// offset is the stream's length (bytes written); dropped counts the bytes that were not.
	offset  int64
	dropped int64
	cur     *os.File // out/<curN>, open; nil when none is
	curN    int64
	// open creates a segment file (openSegment; a failing one in tests).
	open func(path string) (*os.File, error)
}

// newSegments creates out/0 in dir (which exists) and returns the writer of the stream.
func newSegments(dir string, size, keep int64) (*segments, error) {
	s := &segments{dir: dir, size: size, keep: keep, curN: -1, open: openSegment}
	if err := s.start(0); err != nil {
		return nil, err
	}
	return s, nil
}

// openSegment creates (or truncates) a segment file without following a symlink or blocking on a
// FIFO that a command put in its place (open.go).
func openSegment(path string) (*os.File, error) {
	f, _, err := openChecked(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_NOFOLLOW, 0o600, syscall.S_IFREG)
	return f, err
}

// segmentPath is out/<n>.
func (s *segments) segmentPath(n int64) string {
	return filepath.Join(s.dir, strconv.FormatInt(n, 10))
}

// start opens segment n for writing, then unlinks segment n-K.
func (s *segments) start(n int64) error {
	f, err := s.open(s.segmentPath(n))
	if err != nil {
		return err
	}
	if s.cur != nil {
		_ = s.cur.Close()
	}
	s.cur, s.curN = f, n
	if old := n - s.keep; old >= 0 {
		_ = os.Remove(s.segmentPath(old))
	}
	return nil
}

// write appends p to the stream, across as many segments as it takes; what cannot be written is
// counted in dropped.
func (s *segments) write(p []byte) {
	for len(p) > 0 {
		n := s.offset / s.size
		if s.cur == nil || s.curN != n {
			if err := s.start(n); err != nil {
				s.dropped += int64(len(p))
				return
			}
		}
		room := (n+1)*s.size - s.offset
		chunk := p
		if int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		w, err := s.cur.Write(chunk)
		s.offset += int64(w)
		if err != nil {
			// The file's length stays the stream's (its offset advanced by w): the rest of p is
			// dropped, and the next write tries again at the same place.
			s.dropped += int64(len(p) - w)
			return
		}
		p = p[w:]
	}
}

// close closes the current segment file.
func (s *segments) close() {
	if s.cur != nil {
		_ = s.cur.Close()
		s.cur = nil
	}
}
