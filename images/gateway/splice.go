package main

import (
	"io"
	"net"
	"net/http"
	"sync"
)

// A plain-HTTP response's body needs no inspection: past its first bytes, the kernel moves it from
// the origin's connection to the sandbox's (splice(2), through Go's TCPConn.ReadFrom), with no copy
// through the gateway's memory. spliceBody does that once the buffers in between are empty; the
// sandbox's connection is then the TCP connection itself (limitListener).

// spliceBody is the body of a plain-HTTP response of known length. Its reads go through the
// transport until the origin connection's buffer is empty; then the rest of the body (length less
// what was read) goes from the origin's socket to dst, the sandbox's response (http's own
// ReadFrom, which splices to a TCP connection), counted into counted; the read then reports EOF
// (or io.ErrUnexpectedEOF when the origin ended early). The transport then closes the origin
// connection (its body was not read to the end through it): it is not reused.
type spliceBody struct {
	io.ReadCloser
	conn    *originConn
	origin  *net.TCPConn
	dst     io.ReaderFrom
	counted interface{ Add(int64) int64 }
	length  int64
	read    int64
	// drained: a read of at least the transport's buffer went through it (so it holds no bytes).
	drained bool
	done    bool
}

// transportBuffer is the transport's own read buffer (http.Transport's default ReadBufferSize).
const transportBuffer = 4 << 10

func (b *spliceBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if !b.drained || b.conn.buffered() > 0 {
		n, err := b.ReadCloser.Read(p)
		b.read += int64(n)
		b.drained = b.drained || len(p) >= transportBuffer
		return n, err
	}
	b.done = true
	rest := b.length - b.read
	n, err := b.dst.ReadFrom(&io.LimitedReader{R: b.origin, N: rest})
	b.counted.Add(n)
	if err == nil && n < rest {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = io.EOF
	}
	return 0, err
}

// spliceResponse wraps the body of a plain-HTTP/1.x response of known length from a TCP origin
// (no upgrade, no HEAD, a body at all) in a spliceBody writing to cw's response.
func spliceResponse(resp *http.Response, t *target) {
	if resp.ProtoMajor != 1 || resp.ContentLength <= 0 || resp.Body == http.NoBody ||
		resp.StatusCode == http.StatusSwitchingProtocols || resp.Request.Method == http.MethodHead || t.cw == nil {
		return
	}
	origin, ok := t.conn.Conn.(*net.TCPConn)
	dst, canSplice := t.cw.ResponseWriter.(io.ReaderFrom)
	if !ok || !canSplice {
		return
	}
	resp.Body = &spliceBody{ReadCloser: resp.Body, conn: t.conn, origin: origin, dst: dst, counted: &t.rec.in, length: resp.ContentLength}
}

// limitListener accepts at most n connections at once (the others wait in the listen queue). Its
// connections are the accepted *net.TCPConn underneath (their ReadFrom splices), releasing their
// place when closed.
type limitListener struct {
	net.Listener
	places chan struct{}
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, places: make(chan struct{}, n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.places <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.places
		return nil, err
	}
	release := sync.OnceFunc(func() { <-l.places })
	if tc, ok := c.(*net.TCPConn); ok {
		return &limitedTCPConn{TCPConn: tc, release: release}, nil
	}
	return &limitedConn{Conn: c, release: release}, nil
}

type limitedTCPConn struct {
	*net.TCPConn
	release func()
}

func (c *limitedTCPConn) Close() error {
	defer c.release()
	return c.TCPConn.Close()
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	defer c.release()
	return c.Conn.Close()
}
