package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tunnel is an opened CONNECT tunnel: its host (the CONNECT's, equal to the SNI) and port.
type tunnel struct {
	host string
	port int
}

const handshakeTimeout = 30 * time.Second

var errSNIMismatch = errors.New("TLS SNI is not the CONNECT host")

// quiet drops net/http's own log lines (a client's bad handshake is not the operator's business).
var quiet = log.New(io.Discard, "", 0)

// connect handles `CONNECT host:port`: refused with a status at the CONNECT when its first line
// decides it (admit), else answered 200 and opened: the gateway is the TLS server, with a
// certificate for the host signed by the session CA, but only when the ClientHello's SNI names
// the CONNECT host (anything else, or no TLS at all, is refused there: `sni-mismatch`). It then
// serves the requests inside (HTTP/1.1 or HTTP/2, by ALPN) and forwards each to the origin over its
// own verified TLS connection. The tunnel's record is written when it is opened.
func (g *gateway) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitTarget(r.Host, 443)
	if err != nil {
		host, port = hostOnly(r.Host), 0
	}
	rec := newRecord(http.MethodConnect, host, port)
	rec.out.Add(requestHeadSize(r))
	if err != nil {
		g.refuse(w, rec, http.StatusBadRequest)
		return
	}
	if status := g.admit(r.Context(), rec, connectionID(r)); status != 0 {
		g.refuse(w, rec, status)
		return
	}
	conn, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	established := "HTTP/1.1 200 Connection established\r\n\r\n"
	if _, err := io.WriteString(conn, established); err != nil {
		conn.Close()
		return
	}
	rec.in.Add(int64(len(established)))
	g.open(withBuffered(conn, buffered.Reader), rec, tunnel{host: host, port: port})
}

// open does the TLS handshake as the tunnel's host and serves the requests inside.
func (g *gateway) open(conn net.Conn, rec *record, t tunnel) {
	sawHello := false
	config := &tls.Config{
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			sawHello = true
			rec.SNI = clip(strings.ToLower(hello.ServerName))
			if rec.SNI != t.host {
				return nil, errSNIMismatch
			}
			leaf, err := g.ca.leaf(t.host)
			if err != nil {
				return nil, err
			}
			// Full-size TLS records from the first byte: the sandbox is a hop away, and small
			// records (Go's default for a connection's first MiB) cost a download throughput.
			return &tls.Config{
				Certificates:                []tls.Certificate{*leaf},
				NextProtos:                  []string{"h2", "http/1.1"},
				MinVersion:                  tls.VersionTLS12,
				DynamicRecordSizingDisabled: true,
			}, nil
		},
	}
	bc := &batchConn{Conn: conn}
	tc := tls.Server(bc, config)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil && (!sawHello || errors.Is(err, errSNIMismatch)) {
		rec.Refusal = "sni-mismatch"
		g.ctl.record(rec.finish())
		conn.Close()
		return
	}
	rec.Status = http.StatusOK
	rec.Forwarded = true
	g.ctl.record(rec.finish())
	if err != nil {
		conn.Close()
		return
	}
	inner := &http.Server{
		Handler:                      g.inside(t),
		ReadHeaderTimeout:            60 * time.Second,
		IdleTimeout:                  120 * time.Second,
		MaxHeaderBytes:               maxHeaderBytes,
		ErrorLog:                     quiet,
		DisableGeneralOptionsHandler: true,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, batchKey{}, bc)
		},
	}
	_ = inner.Serve(&oneConn{conn: tc})
}

// inside is the handler of the requests inside an opened tunnel: each must name the tunnel's host
// (in its URL if absolute, and in its Host header or :authority), else it is refused
// (`host-sni-mismatch`: domain fronting), then goes to https://host:port.
func (g *gateway) inside(t tunnel) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := splitTarget(r.Host, t.port)
		if err != nil {
			host = strings.ToLower(r.Host)
		}
		rec := newRecord(r.Method, host, t.port)
		rec.SNI, rec.Inside = t.host, true
		rec.out.Add(requestHeadSize(r))
		urlHost := t.host
		if r.URL.Host != "" {
			urlHost, _, _ = splitTarget(r.URL.Host, t.port)
		}
		if err != nil || host != t.host || urlHost != t.host {
			rec.Refusal = "host-sni-mismatch"
			g.refuse(w, rec, http.StatusForbidden)
			return
		}
		if !g.checkRequest(w, r, rec) {
			return
		}
		g.proxy.forward(w, r, rec, "https", net.JoinHostPort(t.host, strconv.Itoa(t.port)))
	})
}

// batchKey is the context key of an opened tunnel's batchConn (its requests' context).
type batchKey struct{}

// oneConn is a listener that yields one connection, then reports itself closed.
type oneConn struct {
	once sync.Once
	conn net.Conn
}

func (l *oneConn) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.conn })
	if c == nil {
		return nil, net.ErrClosed
	}
	return c, nil
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

// withBuffered puts back what the CONNECT's reader already read past the request (a ClientHello
// sent without waiting for the 200).
func withBuffered(conn net.Conn, r *bufio.Reader) net.Conn {
	if r == nil || r.Buffered() == 0 {
		return conn
	}
	return &prefixedConn{Conn: conn, r: io.MultiReader(io.LimitReader(r, int64(r.Buffered())), conn)}
}

type prefixedConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
