package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
)

// Moving a download's bytes through an opened tunnel costs the gateway a decryption and an
// encryption per byte, and the kernel a wake-up of a reader per write. Go's crypto/tls reads and
// writes one TLS record (at most 16 KiB) at a time, so without the three pieces below a download
// costs a read and a write system call and a wake-up of the sandbox's client per 16 KiB:
//   - originConn reads an origin's connection through a 128 KiB buffer (one read takes all that
//     arrived);
//   - fillBody hands ReverseProxy as many of those records as already arrived in one read;
//   - batchConn sends the records that one write to the sandbox made in one system call.
// The bytes, their order and their counts are the same; nothing waits for bytes not yet sent.

// copyBufferSize is ReverseProxy's copy buffer (bufferPool): the most one write to the sandbox holds.
const copyBufferSize = 256 << 10

// originReadSize is an origin connection's read buffer (the transport's own is then small; a
// plain-HTTP body is read past both, straight into ReverseProxy's buffer).
const originReadSize = 128 << 10

// originConn is a connection to an origin read through a buffer.
type originConn struct {
	net.Conn
	r *bufio.Reader
}

func newOriginConn(conn net.Conn) *originConn {
	return &originConn{Conn: conn, r: bufio.NewReaderSize(conn, originReadSize)}
}

func (c *originConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// buffered is how many bytes arrived that were not read yet.
func (c *originConn) buffered() int { return c.r.Buffered() }

// fillBody reads a response body from an origin's TLS connection: after the first record, it goes
// on reading while more bytes already arrived (at most until the next record is whole, which is
// on its way) and the caller's buffer has room.
type fillBody struct {
	io.ReadCloser
	conn *originConn
}

// minFill is the room left in the caller's buffer under which fillBody stops (a full record).
const minFill = 16 << 10

func (b *fillBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for m := n; err == nil && m > 0 && len(p)-n >= minFill && b.conn.buffered() > 0; n += m {
		m, err = b.ReadCloser.Read(p[n:])
	}
	return n, err
}

// fillResponse reads an HTTP/1.x response of known length from a TLS origin through fillBody (not
// an upgrade, whose body is the connection, nor a stream of unknown length, whose parts go to the
// sandbox as they come).
func fillResponse(resp *http.Response, t *target) {
	if resp.TLS == nil || resp.ProtoMajor != 1 || resp.ContentLength <= 0 || resp.StatusCode == http.StatusSwitchingProtocols {
		return
	}
	resp.Body = &fillBody{ReadCloser: resp.Body, conn: t.conn}
}

// batchConn is the sandbox's side of an opened tunnel, under its TLS: between begin and end (one
// write of a response's body), what TLS writes is kept and sent in one system call at end; any
// other time, and past copyBufferSize plus a record, writes go straight through.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      []byte
	err      error
}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.batching && c.buf != nil && len(c.buf)+len(p) <= cap(c.buf) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// batchBuffers hold the records of one write: its body part and each record's framing.
var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, copyBufferSize+minFill+1024); return &b }}

// begin starts keeping writes.
func (c *batchConn) begin() {
	c.mu.Lock()
	c.batching = true
	if c.buf == nil {
		c.buf = (*batchBuffers.Get().(*[]byte))[:0]
	}
	c.mu.Unlock()
}

// end sends what was kept and stops keeping writes; the error is the send's.

func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batching = false
	err := c.flushLocked()
	buf := c.buf
	batchBuffers.Put(&buf)
	c.buf = nil
	return err
}

func (c *batchConn) flushLocked() error {
	if len(c.buf) == 0 {
		return c.err
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if err != nil {
		c.err = err
	}
	return err
}
