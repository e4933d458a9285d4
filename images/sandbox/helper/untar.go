package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

type untarRequest struct {
	Dir string `json:"dir"`
}

// untar extracts a tar archive (warden's workspace copy: directories, regular files, symlinks)
// under dir as the helper's user, keeping permission bits and mtimes. Entry names that are
// absolute or climb out with ".." are refused; other entry types are skipped.
func untar(dir string, data []byte) error {
	root := filepath.Clean(dir)
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return &taggedError{"EINVAL", "archive entry " + h.Name + " leaves the target directory"}
		}
		target := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := uint32(h.Mode) & 0o7777
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(target, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			if err := os.Chmod(target, os.FileMode(mode)&os.ModePerm); err != nil {
				return err
			}
		case tar.TypeReg:
			// Not blocking on a FIFO (or a device) already at target: refused (open.go).
			f, _, err := openChecked(target, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, 0o600, syscall.S_IFREG)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if err == nil {
				err = f.Chmod(os.FileMode(mode) & os.ModePerm)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			_ = os.Chtimes(target, h.ModTime, h.ModTime)
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		}
	}
}
