// A background process's requests (proc_run.go): files in in/ named <seq>.<kind>, seq 16 decimal
// digits, kind data (bytes for stdin or the terminal), eof (close stdin; under a terminal, its EOF
// character), signal (a name without SIG, to the command's process group) or resize
// ("<cols> <rows>", terminal only). The controller writes each atomically (a temp file
// `.<name>.warden-<hex>.tmp`, then rename); the shim watches in/ with inotify (IN_MOVED_TO) and, at
// start and on every event, lists in/ and handles what it has not handled yet in name order.
// Signals and resizes are handled at once; data and eof go, in order, to a writer goroutine, so a
// command that does not read its stdin never stalls a signal. Each request is unlinked once
// handled (a data file once its bytes are written); names starting with "." (temp files) are
// left alone, any other name is unlinked and ignored, and so is every request once the command
// has exited.
package main

import (
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// procSignals are the signals a signal request may name.
var procSignals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "STOP": syscall.SIGSTOP,
	"CONT": syscall.SIGCONT, "WINCH": syscall.SIGWINCH,
}

// procTarget is what requests act on: the shim's command (proc_pty.go), a recorder in tests.
type procTarget interface {
	writeInput(p []byte) error
	closeInput() error
	signal(sig syscall.Signal)
	resize(cols, rows int) error
}

// inputQueue handles the requests of one in/ directory.
type inputQueue struct {
	dir     string
	target  procTarget
	watchFd *os.File // the inotify instance; nil in tests that call scan themselves
	mu      sync.Mutex
	// queued are the data and eof requests handed to the writer and not yet unlinked; order is
	// the writer's queue.
	queued map[string]bool
	order  []string
	wake   chan struct{}
	// exited: the command has ended; closed: a write failed (stdin was closed, or its reader is
	// gone), so later data is dropped.
	exited bool
	closed bool
	buf    []byte // the writer's
}

// requestKind returns the kind of a request file name, or "" for any other name.
func requestKind(name string) string {
	dot := strings.IndexByte(name, '.')
	if dot != 16 {
		return ""
	}
	for _, c := range name[:16] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	switch kind := name[17:]; kind {
	case "data", "eof", "signal", "resize":
		return kind
	}
	return ""
}

// newInputQueue watches dir (IN_MOVED_TO) for target; the watch exists before the command starts,
// so no request is missed between the initial scan and the first event.
func newInputQueue(dir string, target procTarget) (*inputQueue, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_TO|syscall.IN_ONLYDIR); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	q := newQueue(dir, target)
	q.watchFd = os.NewFile(uintptr(fd), "inotify") // non-blocking: read through the poller
	return q, nil
}

// newQueue is an inputQueue without a watch.
func newQueue(dir string, target procTarget) *inputQueue {
	return &inputQueue{dir: dir, target: target, queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// start runs the watcher (initial scan, then a scan per batch of events) and the writer.
func (q *inputQueue) start() {
	go q.writeLoop()
	go func() {
		q.scan()
		buf := make([]byte, 64<<10)
		for {
			if _, err := q.watchFd.Read(buf); err != nil {
				return
			}
			q.scan()
		}
	}()
}

// close stops the watch.
func (q *inputQueue) close() {
	if q.watchFd != nil {
		_ = q.watchFd.Close()
	}
}

// commandExited makes every later request (and every queued one) an ignored one.
func (q *inputQueue) commandExited() {
	q.mu.Lock()
	q.exited = true
	q.mu.Unlock()
}

// scan lists the directory and handles, in name order, every request not handled yet.
func (q *inputQueue) scan() {
	f, err := os.Open(q.dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	_ = f.Close()
	sort.Strings(names)
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		q.mu.Lock()
		queued, exited := q.queued[name], q.exited
		q.mu.Unlock()
		if queued {
			continue
		}
		kind := requestKind(name)
		if exited || kind == "" {
			q.remove(name)
			continue
		}
		switch kind {
		case "data", "eof":
			q.mu.Lock()
			q.queued[name] = true
			q.order = append(q.order, name)
			q.mu.Unlock()
			select {
			case q.wake <- struct{}{}:
			default:
			}
		case "signal":
			if sig, ok := procSignals[q.content(name)]; ok {
				q.target.signal(sig)
			}
			q.remove(name)
		case "resize":
			if f := strings.Fields(q.content(name)); len(f) == 2 {
				cols, err1 := strconv.Atoi(f[0])
				rows, err2 := strconv.Atoi(f[1])
				if err1 == nil && err2 == nil && validSize(cols, rows) {
					_ = q.target.resize(cols, rows)
				}
			}
			q.remove(name)
		}
	}
}

// content is a small request's text (at most 64 bytes, spaces trimmed).
func (q *inputQueue) content(name string) string {
	f, _, err := openRegular(q.dir + "/" + name)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64))
	return strings.TrimSpace(string(b))
}

// remove unlinks a request.
func (q *inputQueue) remove(name string) { _ = os.Remove(q.dir + "/" + name) }

// next returns the writer's next request, or "" when none is queued.
func (q *inputQueue) next() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return ""
	}
	name := q.order[0]
	q.order = q.order[1:]
	return name
}

// writeLoop handles the data and eof requests in order, for the shim's life.
func (q *inputQueue) writeLoop() {
	for range q.wake {
		for name := q.next(); name != ""; name = q.next() {
			q.write(name)
		}
	}
}

// write handles one data or eof request, then unlinks it. After the command's exit or a failed
// write, the request is only unlinked.
func (q *inputQueue) write(name string) {
	defer func() {
		q.remove(name)
		q.mu.Lock()
		delete(q.queued, name)
		q.mu.Unlock()
	}()
	q.mu.Lock()
	skip := q.exited || q.closed
	q.mu.Unlock()
	if skip {
		return
	}
	if requestKind(name) == "eof" {
		// With pipes, later data finds stdin closed (a failed write); under a terminal, the EOF
		// character ends one read only, and input goes on.
		_ = q.target.closeInput()
		return
	}
	f, _, err := openRegular(q.dir + "/" + name)
	if err != nil {
		return
	}
	defer f.Close()
	if q.buf == nil {
		q.buf = make([]byte, 64<<10)
	}
	for {
		n, rerr := f.Read(q.buf)
		if n > 0 {
			if err := q.target.writeInput(q.buf[:n]); err != nil {
				q.mu.Lock()
				q.closed = true
				q.mu.Unlock()
				return
			}
		}
		if rerr != nil {
			return
		}
	}
}
