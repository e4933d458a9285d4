package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// gateway is one session's egress proxy: plain HTTP by absolute URL, and CONNECT tunnels that
// carry TLS, which it opens (tunnel.go) to check every request inside. What a rule lets through is
// checked again by the gateway's own checks (IP literals, refused addresses, SNI = CONNECT host,
// Host = SNI, secrets' placeholders); every connection and request is one record (record.go).
type gateway struct {
	cfg     *Config
	clients cidrSet
	ca      *sessionCA
	ctl     *controller
	dial    *dialer
	proxy   *originProxy
}

// ServeHTTP is the proxy port's handler.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ip := net.ParseIP(hostOnly(r.RemoteAddr)); ip == nil || !g.clients.contains(ip) {
		writeRefusal(w, http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		g.connect(w, r)
		return
	}
	g.plain(w, r)
}

// plain forwards a plain-HTTP request by absolute URL (`GET http://name/path`). The origin gets the
// URL's host as Host (RFC 9112 §3.2.2: the request target's authority wins over a Host header).
func (g *gateway) plain(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitTarget(r.URL.Host, 80)
	bad := err != nil || r.URL.Scheme != "http"
	if bad {
		host, port = hostOnly(r.Host), 80
	}
	rec := newRecord(r.Method, host, port)
	rec.out.Add(requestHeadSize(r))
	if bad {
		g.refuse(w, rec, http.StatusBadRequest)
		return
	}
	if status := g.admit(r.Context(), rec, connectionID(r)); status != 0 {
		g.refuse(w, rec, status)
		return
	}
	if !g.checkRequest(w, r, rec) {
		return
	}
	g.proxy.forward(w, r, rec, "http", r.URL.Host)
}

// admit decides a connection from its first line (CONNECT authority or absolute URL): 0 to go on, or
// the status to refuse with. IP literals and names no rule allows are refused without resolving
// them; an ask rule asks the controller first (conn names the sandbox's connection, so a kept-alive
// connection's later requests are covered by its answer), and only then is the name resolved: no
// name under an ask rule reaches any resolver before someone allowed it. A name that resolves to
// a refused address is refused.
func (g *gateway) admit(ctx context.Context, rec *record, conn uint64) int {
	if isIPLiteral(rec.Host) || !validName(rec.Host) {
		return http.StatusForbidden
	}
	decision := decide(g.cfg.Rules, rec.Host, rec.Port)
	if decision == "deny" {
		return http.StatusForbidden
	}
	if decision == "ask" {
		a := g.ctl.ask("q", fmt.Sprintf("%s %d %d", rec.Host, rec.Port, conn), time.Duration(g.cfg.AskDeadlineMs)*time.Millisecond)
		rec.Ask = a.rest
		if !a.ok {
			return http.StatusForbidden
		}
	}
	if _, err := g.dial.check(ctx, rec.Host); err != nil {
		if errors.Is(err, errRefusedAddress) {
			rec.Refusal = "refused-address"
			return http.StatusForbidden
		}
		rec.Refusal = "unreachable"
		return http.StatusBadGateway
	}
	return 0
}

// connKey is the context key of a front connection's id (ConnContext in main.go).
type connKey struct{}

var connCounter atomic.Uint64

// withConnectionID gives each connection to the proxy its own id, from 1.
func withConnectionID(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, connCounter.Add(1))
}

// connectionID is the id of the connection r came on (0 outside the front server).
func connectionID(r *http.Request) uint64 {
	id, _ := r.Context().Value(connKey{}).(uint64)
	return id
}

// checkRequest is the gateway's check of each request it would forward: TRACE never goes out (an
// origin answering it reflects the request as forwarded, a secret's value with it: refusal
// `method`, 405), and a request carrying a secret's placeholder is decided by the controller
// (applySecrets). False when the request was refused (the answer and the record are written).
func (g *gateway) checkRequest(w http.ResponseWriter, r *http.Request, rec *record) bool {
	if r.Method == http.MethodTrace {
		rec.Refusal = "method"
		g.refuse(w, rec, http.StatusMethodNotAllowed)
		return false
	}
	return g.applySecrets(w, r, rec)
}

// refuse answers status and writes the record.
func (g *gateway) refuse(w http.ResponseWriter, rec *record, status int) {
	rec.Status = status
	rec.in.Add(int64(writeRefusal(w, status)))
	g.ctl.record(rec.finish())
}

// writeRefusal writes a fixed page: nothing of the request (it may carry a secret's placeholder or
// a header the sandbox wants reflected) is ever in it.
func writeRefusal(w http.ResponseWriter, status int) int {
	body := fmt.Sprintf("warden egress gateway: %d %s\n", status, http.StatusText(status))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	n, _ := io.WriteString(w, body)
	return n + 64
}

// hostOnly is the host of `host:port` (or the text itself when it has no port).
func hostOnly(address string) string {
	if h, _, err := net.SplitHostPort(address); err == nil {
		return h
	}
	return address
}

// requestHeadSize estimates the bytes of a request's line and headers.
func requestHeadSize(r *http.Request) int64 {
	n := len(r.Method) + len(r.RequestURI) + 12
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return int64(n)
}
