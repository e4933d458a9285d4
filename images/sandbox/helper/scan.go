// The scan bound of a line read. A line read streams the file to its end (it counts the lines),
// trusting the end to come: for a stored file it does, after at most what its filesystem holds.
// A pseudo file has no such end: /proc/<pid>/pagemap reports size 0 and gives 8 bytes per page
// of the process's address space (hundreds of GiB) while the process lives, and the read held one
// of the fileOpSlots for minutes, long after the caller's 30 s timeout; 8 of them stalled every
// file operation of the session. A command can put a link to one at a workspace path between the
// controller's confinement check and the open, so the helper bounds the scan itself: a read stops
// with an error once it has read more than the file's size at open or its filesystem's capacity
// (statfs blocks × block size; 0 on proc and sysfs), whichever is larger, plus scanSlackBytes.
// A small pseudo file (/proc/self/status, /proc/cpuinfo: a few KiB) still reads whole; a stored
// file is never cut short, since it cannot hold more than its filesystem.
// Devices (/dev/zero, /dev/urandom) and FIFOs never get here: open.go refuses what is not a
// regular file.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

const (
	// scanSlackBytes is read past a file's size and its filesystem's capacity before a scan stops:
	// room for a small pseudo file (size 0 on a filesystem of 0 bytes) and for a file that grows
	// a little while it is read.
	scanSlackBytes = 1 << 20
	// scanChunkBytes is how much of the file one read(2) of a scan takes.
	scanChunkBytes = 1 << 20
)

// scanLimitError: a scan read more than limit bytes (sizeBytes and fsBytes are what it was made of).
type scanLimitError struct {
	limit, sizeBytes, fsBytes int64
}

func (e *scanLimitError) Error() string {
	return fmt.Sprintf("read more than %d bytes", e.limit)
}

// explain words the error for the caller, naming path, the limit, and what to do instead (EINVAL:
// the controller shows it as an invalid argument, "reading <path>: <message>.").
func (e *scanLimitError) explain(path string) error {
	return &taggedError{"EINVAL", fmt.Sprintf("%s gave more than %d bytes, more than a stored file can hold"+
		" (its size was %d bytes, its filesystem holds %d): it is a pseudo file such as /proc/<pid>/pagemap,"+
		" or it keeps growing; read a part of it with bash instead, e.g. head -c 65536 %s",
		path, e.limit, e.sizeBytes, e.fsBytes, path)}
}

// scanLimit is the scan bound of f in bytes: the larger of sizeBytes (its size at open) and its
// filesystem's capacity (0 when fstatfs fails), plus scanSlackBytes.
func scanLimit(f *os.File, sizeBytes int64) *scanLimitError {
	var st syscall.Statfs_t
	var fsBytes int64
	if err := syscall.Fstatfs(int(f.Fd()), &st); err == nil {
		fsBytes = int64(st.Blocks) * st.Bsize
	}
	limit := sizeBytes
	if fsBytes > limit {
		limit = fsBytes
	}
	return &scanLimitError{limit: limit + scanSlackBytes, sizeBytes: sizeBytes, fsBytes: fsBytes}
}

// scanLines streams r in scanChunkBytes chunks: skips to StartLine, collects up to MaxLines lines
// and MaxBytes bytes, then (with CountLines) keeps counting newlines to the end. Memory: one
// chunk plus the collected bytes. Returns the newline count and whether it reached EOF; fails
// with bound (a *scanLimitError) once more than bound.limit bytes were read.
func scanLines(r io.Reader, req readRequest, bound *scanLimitError) ([]byte, int64, bool, error) {
	buf := make([]byte, scanChunkBytes)
	var out []byte
	var line int64 = 1
	var newlines, taken, scanned int64
	collecting := req.MaxLines > 0 && req.MaxBytes > 0
	for {
		n, err := r.Read(buf)
		if scanned += int64(n); scanned > bound.limit {
			return nil, 0, false, bound
		}
		chunk := buf[:n]
		pos := 0
		for pos < n && collecting {
			idx := bytes.IndexByte(chunk[pos:], '\n')
			end := n
			if idx >= 0 {
				end = pos + idx + 1
			}
			if line < req.StartLine {
				if idx < 0 {
					pos = n
					break
				}
				pos, line, newlines = end, line+1, newlines+1
				continue
			}
			room := int(req.MaxBytes) - len(out)
			if end-pos > room {
				out = append(out, chunk[pos:pos+room]...)
				collecting = false // stop; the rest of this line is counted below
				break
			}
			out = append(out, chunk[pos:end]...)
			pos = end
			if idx >= 0 {
				line, newlines, taken = line+1, newlines+1, taken+1
				if taken == req.MaxLines {
					collecting = false
				}
			}
			if len(out) == int(req.MaxBytes) {
				collecting = false
			}
		}
		if !collecting {
			if !req.CountLines {
				return out, newlines, false, nil
			}
			newlines += int64(bytes.Count(chunk[pos:], []byte{'\n'}))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, newlines, true, nil
			}
			return nil, 0, false, err
		}
	}
}
