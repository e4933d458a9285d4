package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// realpath resolves like GNU `realpath -m` (physical): components are resolved left to right,
// following symlinks as they are met (at most 40, as the kernel's ELOOP limit); from the first
// component that does not exist, the rest is appended lexically. Returns an absolute clean path.
func realpath(path string) (string, error) {
	pending := splitPath(path)
	resolved := "/"
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		st, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, pending...)...), nil
			}
			return "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > 40 {
			return "", &os.PathError{Op: "realpath", Path: path, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
