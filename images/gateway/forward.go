package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// originProxy forwards checked requests to their origins over one pooled transport: connections
// and TLS sessions to an origin are reused across the session's requests and tunnels (HTTP/1.1
// keep-alive, or HTTP/2 where the origin offers it); the origin's certificate is verified against
// the system's CAs plus the operator's. Upgrades (WebSocket, `101 Switching Protocols`) pass through.
type originProxy struct {
	rp  *httputil.ReverseProxy
	ctl *controller
}

type targetKey struct{}

// target is where a request goes and the record it counts into.
type target struct {
	scheme, authority string
	rec               *record
	// conn is the origin connection the request went on (GotConn).
	conn *originConn
	// cw is what the sandbox receives.
	cw *countingWriter
}

func newOriginProxy(d *dialer, roots *x509.CertPool, ctl *controller) *originProxy {
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, address)
			if err != nil {
				return nil, err
			}
			return newOriginConn(conn), nil
		},
		TLSClientConfig:       &tls.Config{RootCAs: roots, ClientSessionCache: tls.NewLRUClientSessionCache(256)},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		WriteBufferSize:       128 << 10,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			t := pr.In.Context().Value(targetKey{}).(*target)
			pr.Out.URL.Scheme, pr.Out.URL.Host = t.scheme, t.authority
			pr.Out.Host = pr.In.Host
		},
		Transport:      transport,
		BufferPool:     bufferPool{},
		ModifyResponse: fastBody,
		ErrorLog:       quiet,
		ErrorHandler:   originError,
	}
	return &originProxy{rp: rp, ctl: ctl}
}

// forward sends r to scheme://authority, counting bytes and the status into rec, and writes the
// record when it ends, also when the response is cut midway (ReverseProxy then panics with
// http.ErrAbortHandler to abort the connection: recorded, then passed on).
func (p *originProxy) forward(w http.ResponseWriter, r *http.Request, rec *record, scheme, authority string) {
	t := &target{scheme: scheme, authority: authority, rec: rec}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			rec.Remote = hostOnly(info.Conn.RemoteAddr().String())
			conn := info.Conn
			if tc, ok := conn.(*tls.Conn); ok {
				conn = tc.NetConn()
			}
			t.conn, _ = conn.(*originConn)
		},
	}
	ctx := context.WithValue(httptrace.WithClientTrace(r.Context(), trace), targetKey{}, t)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &countingBody{ReadCloser: r.Body, n: &rec.out}
	}
	cw := &countingWriter{ResponseWriter: w, rec: rec}
	t.cw = cw
	if bc, ok := r.Context().Value(batchKey{}).(*batchConn); ok && r.ProtoMajor == 1 {
		// HTTP/1.x inside a tunnel: a write's records go out together (HTTP/2 writes its frames from
		// another goroutine, under flow control: never kept).
		cw.batch = bc
	}
	defer func() {
		aborted := recover()
		rec.Status = cw.status
		rec.Forwarded = rec.Refusal == "" && cw.status != 0 && !cw.refused
		p.ctl.record(rec.finish())
		if aborted != nil {
			panic(aborted)
		}
	}()
	p.rp.ServeHTTP(cw, r.WithContext(ctx))
}

// fastBody is ReverseProxy's ModifyResponse: a response's body read in large parts (fillResponse,
// from a TLS origin) or moved by the kernel (spliceResponse, plain HTTP).
func fastBody(resp *http.Response) error {
	t, _ := resp.Request.Context().Value(targetKey{}).(*target)
	if t == nil || t.conn == nil {
		return nil
	}
	if resp.TLS != nil {
		fillResponse(resp, t)
	} else {
		spliceResponse(resp, t)
	}
	return nil
}

// originError answers a request the origin could not take: 403 for a refused address (a name that
// now resolves to one: rebinding), 502 otherwise, naming the gateway's check in the record.
func originError(w http.ResponseWriter, r *http.Request, err error) {
	t := r.Context().Value(targetKey{}).(*target)
	var verify *tls.CertificateVerificationError
	status := http.StatusBadGateway
	switch {
	case errors.Is(err, errRefusedAddress):
		t.rec.Refusal, status = "refused-address", http.StatusForbidden
	case errors.As(err, &verify) || strings.Contains(err.Error(), "tls: "):
		t.rec.Refusal = "upstream-tls"
	case errors.Is(err, context.Canceled):
		// The sandbox went away mid-request: nothing was refused.
		return
	default:
		t.rec.Refusal = "unreachable"
	}
	if cw, ok := w.(*countingWriter); ok {
		cw.refused = true
	}
	writeRefusal(w, status)
}

// bufferPool gives ReverseProxy copyBufferSize copy buffers (its default is 32 KiB): fewer syscalls per MiB.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }

type countingBody struct {
	io.ReadCloser
	n interface{ Add(int64) int64 }
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countingWriter counts what the sandbox receives; it flushes and hijacks (an upgraded connection's
// bytes are counted both ways until it closes).
type countingWriter struct {
	http.ResponseWriter
	rec     *record
	status  int
	refused bool
	// batch, when set, is the tunnel's connection: each write's records are sent together.
	batch *batchConn
}

func (w *countingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		n := 16
		for k, vs := range w.Header() {
			for _, v := range vs {
				n += len(k) + len(v) + 4
			}
		}
		w.rec.in.Add(int64(n))
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.batch != nil {
		w.batch.begin()
	}
	n, err := w.ResponseWriter.Write(p)
	if w.batch != nil {
		if ferr := w.batch.end(); err == nil && ferr != nil {
			n, err = 0, ferr
		}
	}
	w.rec.in.Add(int64(n))
	return n, err
}

func (w *countingWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	counted := &countingConn{Conn: conn, rec: w.rec}
	pending := io.LimitReader(rw.Reader, int64(rw.Reader.Buffered()))
	return counted, bufio.NewReadWriter(bufio.NewReader(io.MultiReader(pending, counted)), bufio.NewWriter(counted)), nil
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type countingConn struct {
	net.Conn
	rec *record
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.rec.out.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.rec.in.Add(int64(n))
	return n, err
}
