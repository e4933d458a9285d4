// The end of a background process (proc_run.go): exit.json, written atomically (a temp file
// renamed) once the command has ended and its tree is gone. Its space is taken when the shim
// starts: a full /tmp (the output's segments fill it, ENOSPC) must not lose the exit status.
package main

import (
	"os"
	"path/filepath"
	"syscall"
)

// exitRecord is exit.json: code is the exit status, 128+N for a death by signal N (as the exec
// frame's exit); endedAt the command's end in Unix milliseconds; outputBytes the stream's length;
// droppedBytes what could not be written (ENOSPC, EFBIG).
type exitRecord struct {
	Code         int   `json:"code"`
	Signal       int   `json:"signal,omitempty"`
	EndedAt      int64 `json:"endedAt"`
	OutputBytes  int64 `json:"outputBytes"`
	DroppedBytes int64 `json:"droppedBytes"`
}

// exitReserveName is exit.json's reserved space until the end, in the process's directory.
const exitReserveName = ".exit.json.warden-reserve.tmp"

// reserveExit creates exitReserveName with one page of zeros: when the output has filled /tmp
// (ENOSPC), exit.json is still written, into the page tmpfs allocated then.
func reserveExit(dir string) (*os.File, error) {
	f, _, err := openChecked(filepath.Join(dir, exitReserveName), syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW, 0o644, syscall.S_IFREG)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		_ = f.Close()
		_ = os.Remove(filepath.Join(dir, exitReserveName))
		return nil, err
	}
	return f, nil
}

// writeExit writes exit.json atomically: into the reserved file, cut to its length, renamed; or,
// when that fails, through a new temp file (files.go's writeFile).
func (s *shim) writeExit(j []byte) {
	reserved := filepath.Join(s.cfg.Dir, exitReserveName)
	_, err := s.reserve.WriteAt(j, 0)
	if err == nil {
		err = s.reserve.Truncate(int64(len(j)))
	}
	if cerr := s.reserve.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(reserved, filepath.Join(s.cfg.Dir, "exit.json"))
	}
	if err != nil {
		_ = os.Remove(reserved)
		_ = writeFile(filepath.Join(s.cfg.Dir, "exit.json"), j, nil)
	}
}
