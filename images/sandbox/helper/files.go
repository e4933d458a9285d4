package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

const workspaceDir = "/workspace"

// maxData bounds the data of one read or write (a frame holds at most maxPayload bytes).
const maxData = maxPayload - 64<<10

type pathRequest struct {
	Path string `json:"path"`
}

type readRequest struct {
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	Offset     int64  `json:"offset"`
	Length     int64  `json:"length"`
	StartLine  int64  `json:"startLine"`
	MaxLines   int64  `json:"maxLines"`
	MaxBytes   int64  `json:"maxBytes"`
	CountLines bool   `json:"countLines"`
}

// readResult: TotalBytes always; Newlines and EndsWithNewline only when Counted (the whole file
// was scanned).
type readResult struct {
	TotalBytes      int64 `json:"totalBytes"`
	Counted         bool  `json:"counted"`
	Newlines        int64 `json:"newlines"`
	EndsWithNewline bool  `json:"endsWithNewline"`
}

type writeRequest struct {
	Path string `json:"path"`
	Mode *int   `json:"mode"`
}

type statBody struct {
	Type    string `json:"type"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	MtimeMs int64  `json:"mtimeMs"`
}

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspaceDir, p)
	}
	return filepath.Clean(p)
}

func fileOp(w *writer, f frame) {
	var err error
	switch f.typ {
	case tRead:
		var req readRequest
		if err = json.Unmarshal(f.payload, &req); err == nil {
			var res readResult
			var data []byte
			if res, data, err = readFile(req); err == nil {
				w.send(tResult, f.id, joinJSONData(res, data))
			}
		}
	case tWrite:
		var req writeRequest
		var data []byte
		if data, err = splitJSONData(f.payload, &req); err == nil {
			if err = writeFile(abs(req.Path), data, req.Mode); err == nil {
				w.sendJSON(tResult, f.id, struct{}{})
			}
		}
	case tUntar:
		var req untarRequest
		var data []byte
		if data, err = splitJSONData(f.payload, &req); err == nil {
			if err = untar(abs(req.Dir), data); err == nil {
				w.sendJSON(tResult, f.id, struct{}{})
			}
		}
	case tStat, tRealpath, tListDir:
		var req pathRequest
		if err = json.Unmarshal(f.payload, &req); err == nil {
			var body interface{}
			switch f.typ {
			case tStat:
				body, err = lstat(abs(req.Path))
			case tRealpath:
				body, err = realpath(abs(req.Path))
			default:
				body, err = listDir(abs(req.Path))
			}
			if err == nil {
				w.sendJSON(tResult, f.id, body)
			}
		}
	}
	if err != nil {
		w.sendError(f.id, err)
	}
}

// openRegular opens a regular file for reading without blocking on a FIFO or a device (open.go).
func openRegular(path string) (*os.File, int64, error) {
	return openChecked(path, syscall.O_RDONLY, 0, syscall.S_IFREG)
}

func readFile(req readRequest) (readResult, []byte, error) {
	f, size, err := openRegular(abs(req.Path))
	if err != nil {
		return readResult{}, nil, err
	}
	defer f.Close()
	res := readResult{TotalBytes: size}
	if req.Kind == "bytes" {
		if req.Offset < 0 || req.Length < 0 || req.Length > maxData {
			return res, nil, &taggedError{"EINVAL", "byte range must be non-negative and at most 64 MiB"}
		}
		n := req.Length
		if req.Offset >= size {
			n = 0
		} else if req.Offset+n > size {
			n = size - req.Offset
		}
		data := make([]byte, n)
		got, err := f.ReadAt(data, req.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return res, nil, err
		}
		return res, data[:got], nil
	}
	if req.StartLine < 1 || req.MaxLines < 0 || req.MaxBytes < 0 || req.MaxBytes > maxData {
		return res, nil, &taggedError{"EINVAL", "line range needs startLine >= 1, maxLines >= 0, 0 <= maxBytes <= 64 MiB"}
	}
	data, newlines, eof, err := scanLines(f, req, scanLimit(f, size))
	if err != nil {
		var over *scanLimitError
		if errors.As(err, &over) {
			err = over.explain(abs(req.Path))
		}
		return res, nil, err
	}
	if eof {
		res.Counted, res.Newlines = true, newlines
		if size > 0 {
			var last [1]byte
			if _, err := f.ReadAt(last[:], size-1); err == nil {
				res.EndsWithNewline = last[0] == '\n'
			}
		}
	}
	return res, data, nil
}

func writeFile(path string, data []byte, mode *int) error {
	dir, base := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	perm := uint32(0o644)
	if st, err := os.Lstat(path); err == nil {
		if st.IsDir() {
			return &os.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && st.Mode().IsRegular() {
			// Not the set-ID bits of the file replaced: the filter (filemode.go) refuses them.
			perm = sys.Mode & 0o1777
		}
	}
	if mode != nil {
		perm = uint32(*mode) & 0o7777
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+base+".warden-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		// fchmod directly: exact bits (setuid/setgid/sticky too), no umask.
		err = syscall.Fchmod(int(f.Fd()), perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func fileType(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// lstat returns nil (JSON null) when nothing exists at the path.
func lstat(path string) (*statBody, error) {
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, err
	}
	mode := uint32(st.Mode().Perm())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		mode = sys.Mode & 0o7777 // with setuid, setgid and sticky bits, as find's %m
	}
	return &statBody{
		Type:    fileType(st.Mode()),
		Size:    st.Size(),
		Mode:    mode,
		MtimeMs: (st.ModTime().UnixNano() + 500_000) / 1e6,
	}, nil
}

func listDir(path string) ([]dirEntry, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return nil, &taggedError{"NOTDIR", path + " is not a directory"}
	}
	// O_DIRECTORY: what replaced the directory since the stat is refused, never opened (open.go).
	f, _, err := openChecked(path, syscall.O_RDONLY|syscall.O_DIRECTORY, 0, syscall.S_IFDIR)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, dirEntry{Name: e.Name(), Type: fileType(e.Type())})
	}
	return out, nil
}
