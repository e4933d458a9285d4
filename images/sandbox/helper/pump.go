// Forwarding a command's stdout and stderr pipes as frames, and draining them after the
// command's process group was killed.
package main

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// stallAfterKill: a pipe whose reader has waited this long for data after the group was killed
// is held by a process that left the group (a dead writer's pipe reads EOF at once).
const stallAfterKill = 500 * time.Millisecond

// pipePump forwards one pipe. Its state tells the supervisor whether the pipe is still held by a
// live writer (reader waiting for data) or only slowed down by the channel (reader sending).
type pipePump struct {
	f        *os.File
	capacity int64
	mu       sync.Mutex
	// waitingSince is when the current Read began; zero while data is being sent.
	waitingSince time.Time
	killed       bool
	// afterKill counts the bytes read since markKilled.
	afterKill int64
}

func newPipePump(f *os.File) *pipePump {
	growPipe(f)
	return &pipePump{f: f, capacity: pipeCapacity(f)}
}

// run forwards the pipe as frames of at most 256 KiB. It waits for each frame to be written
// before reading again, so at most one chunk per pipe is in flight.
func (p *pipePump) run(w *writer, id uint32, typ byte, activity chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer p.f.Close()
	buf := make([]byte, 256<<10)
	for {
		p.mu.Lock()
		p.waitingSince = time.Now()
		p.mu.Unlock()
		n, err := p.f.Read(buf)
		p.mu.Lock()
		p.waitingSince = time.Time{}
		if p.killed {
			p.afterKill += int64(n)
		}
		p.mu.Unlock()
		if n > 0 {
			w.sendSync(typ, id, buf[:n])
			select {
			case activity <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// markKilled starts counting the bytes read from now on (call it before killing the group).
func (p *pipePump) markKilled() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
}

// stalled: after the kill, a process outside the group holds the pipe: the reader has waited
// stallAfterKill for data, or more than twice the pipe's capacity arrived after the kill (what
// dead writers left in the pipe is at most its capacity; the rest comes from a live writer).
func (p *pipePump) stalled(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	waiting := !p.waitingSince.IsZero() && now.Sub(p.waitingSince) >= stallAfterKill
	return waiting || p.afterKill > 2*p.capacity
}

// drainAfterKill waits until both pipes reach EOF, so what the killed group left in them is
// delivered however slowly the controller reads (a batch of large outputs shares one channel),
// and stops reading a pipe only when a process that left the group holds it (stalled).
func drainAfterKill(pumps []*pipePump, pipesClosed chan struct{}) {
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-pipesClosed:
			return
		case now := <-ticker.C:
			for _, p := range pumps {
				if p.stalled(now) {
					p.f.Close()
				}
			}
		}
	}
}

// growPipe asks for a 1 MiB pipe buffer (F_SETPIPE_SZ; the unprivileged maximum by default), so
// a fast writer and this reader switch less often. Failure leaves the default 64 KiB.
func growPipe(f *os.File) {
	if raw, err := f.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, 1031 /* F_SETPIPE_SZ */, 1<<20)
		})
	}
}

// pipeCapacity is the pipe's buffer size in bytes (F_GETPIPE_SZ); 1 MiB when it cannot be read.
func pipeCapacity(f *os.File) int64 {
	size := int64(1 << 20)
	if raw, err := f.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			if n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, 1032 /* F_GETPIPE_SZ */, 0); errno == 0 {
				size = int64(n)
			}
		})
	}
	return size
}
