package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
)

// outFrame is queued for the single writer goroutine. done (optional) is closed once the frame
// is written, so a reader can reuse its buffer.
type outFrame struct {
	typ     byte
	id      uint32
	payload []byte
	done    chan struct{}
	// then (optional): after this frame, every later one goes to `then` (socket.go).
	then io.Writer
}

// writer owns stdout. The queue is small and bounded: when the controller reads slowly, the
// queue fills, command readers block, the commands' pipes fill and the commands block. Nothing
// is ever buffered without bound (backpressure end to end).
type writer struct {
	queue chan outFrame
	out   *os.File
	// fail runs when stdout breaks (the controller is gone); nil: exit with status 3.
	fail func()
}

func newWriter() *writer {
	return newWriterTo(os.Stdout)
}

// newWriterTo writes the frames to `out` (stdout in the helper, a pipe in tests).
func newWriterTo(out *os.File) *writer {
	w := &writer{queue: make(chan outFrame, 16), out: out}
	go w.run()
	return w
}

func (w *writer) run() {
	// stdout is the FIFO containerd-shim reads: a 1 MiB pipe (as for the commands' pipes) takes a
	// whole flush at once, so a flood costs far fewer blocked writes and wake-ups than at 64 KiB.
	growPipe(w.out)
	out := bufio.NewWriterSize(w.out, 256<<10)
	var h [headerBytes]byte
	onSocket := false
	for f := range w.queue {
		encodeHeader(h[:], f.typ, f.id, len(f.payload))
		_, err := out.Write(h[:])
		if err == nil {
			_, err = out.Write(f.payload)
		}
		// Flush when nothing else is waiting: small frames leave at once, floods go in big writes.
		if err == nil && len(w.queue) == 0 {
			err = out.Flush()
		}
		if err == nil && f.then != nil {
			err = out.Flush()
			out = bufio.NewWriterSize(f.then, 256<<10)
			onSocket = true
		}
		if f.done != nil {
			close(f.done)
		}
		if err != nil && onSocket {
			// The controller is gone: discard every later frame instead of exiting, so the
			// container lives on for a controller to adopt (main.go).
			logf("channel socket write failed: %v; discarding output", err)
			out = bufio.NewWriterSize(io.Discard, 4096)
			onSocket = false
			continue
		}
		if err != nil {
			logf("stdout write failed: %v", err)
			if w.fail != nil {
				w.fail()
			}
			os.Exit(3)
		}
	}
}

func (w *writer) send(typ byte, id uint32, payload []byte) {
	w.queue <- outFrame{typ: typ, id: id, payload: payload}
}

// sendSync queues a frame and waits until it is written (the caller reuses payload's memory).
func (w *writer) sendSync(typ byte, id uint32, payload []byte) {
	done := make(chan struct{})
	w.queue <- outFrame{typ: typ, id: id, payload: payload, done: done}
	<-done
}

// switchTo queues a frame for the current stream, after which the writer writes to `next`.
func (w *writer) switchTo(typ byte, id uint32, payload []byte, next io.Writer) {
	done := make(chan struct{})
	w.queue <- outFrame{typ: typ, id: id, payload: payload, done: done, then: next}
	<-done
}

func (w *writer) sendJSON(typ byte, id uint32, v interface{}) {
	j, _ := json.Marshal(v)
	w.send(typ, id, j)
}

// opError is the body of an error frame: an errno name (ENOENT, EISDIR, ...) and a message.
type opError struct {
	Errno   string `json:"errno"`
	Message string `json:"message"`
}

func (w *writer) sendError(id uint32, err error) {
	w.sendJSON(tError, id, opError{Errno: errnoName(err), Message: err.Error()})
}
