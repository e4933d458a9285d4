package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// record is one WARDEN-CONN line: a CONNECT tunnel (when it is opened or refused), a request inside
// an opened tunnel, or a plain-HTTP request (when it ends). src/egress/access-log.ts turns it into
// a ConnectionAudit; the rule text is decided there, from the same rules.
type record struct {
	// Seq numbers the gateway's records from 1 (the controller acknowledges by it).
	Seq uint64 `json:"seq"`
	// Time is when the connection or request ended, in ms since the epoch.
	Time int64 `json:"time"`
	// Method is CONNECT or the request's method.
	Method string `json:"method"`
	// Host is the name (or IP literal) asked for; Port its port.
	Host string `json:"host"`
	Port int    `json:"port"`
	// SNI is the TLS server name of the tunnel (for a tunnel and the requests inside it).
	SNI string `json:"sni,omitempty"`
	// Inside is true for a request inside an opened tunnel.
	Inside bool `json:"inside,omitempty"`
	// Forwarded is true when the request went to the origin (or the tunnel was opened).
	Forwarded bool `json:"forwarded"`
	// Status is the HTTP status the client got (0 for a tunnel refused inside TLS).
	Status int `json:"status"`
	// Refusal is the gateway's own check that refused what a rule let through (GatewayRefusal).
	Refusal string `json:"refusal,omitempty"`
	// Ask is the ask outcome (AskOutcome) of a connection under an ask rule.
	Ask string `json:"ask,omitempty"`
	// Secret is the secret note: `use.NAMES` or `<reason>.<NAME>`.
	Secret string `json:"secret,omitempty"`
	// BytesOut and BytesIn are the bytes the sandbox sent and received.
	BytesOut int64 `json:"bytesOut"`
	BytesIn  int64 `json:"bytesIn"`
	// DurationMs is how long the connection or request took.
	DurationMs int64 `json:"durationMs"`
	// Remote is the address the gateway connected to.
	Remote string `json:"remote,omitempty"`

	start time.Time
	in    atomic.Int64
	out   atomic.Int64
}

// maxRecordField bounds what the sandbox chooses in a record (method, host, SNI) to a DNS name's
// size: a record stays small whatever a request names (the controller bounds records by count).
const maxRecordField = 253

// clip cuts text to maxRecordField bytes.
func clip(text string) string {
	if len(text) > maxRecordField {
		return text[:maxRecordField]
	}
	return text
}

func newRecord(method, host string, port int) *record {
	return &record{Method: clip(method), Host: clip(host), Port: port, start: time.Now()}
}

// finish stamps the end time, duration and byte counts.
func (r *record) finish() *record {
	now := time.Now()
	r.Time = now.UnixMilli()
	r.DurationMs = now.Sub(r.start).Milliseconds()
	r.BytesIn += r.in.Load()
	r.BytesOut += r.out.Load()
	return r
}

// silentConns writes a record (method and host `-`) for a connection to the proxy that closed
// before sending a request: one record per connection, as for the others, so a flood of them is
// seen (and bounded by the controller's audit limit).
type silentConns struct {
	ctl *controller
	mu  sync.Mutex
	// silent holds each connection opened and not yet active, with its start.
	silent map[net.Conn]time.Time
}

func newSilentConns(ctl *controller) *silentConns {
	return &silentConns{ctl: ctl, silent: map[net.Conn]time.Time{}}
}

// track is the front server's ConnState hook.
func (s *silentConns) track(conn net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case http.StateNew:
		s.silent[conn] = time.Now()
	case http.StateActive, http.StateHijacked:
		delete(s.silent, conn)
	case http.StateClosed:
		if start, silent := s.silent[conn]; silent {
			delete(s.silent, conn)
			rec := &record{Method: "-", Host: "-", start: start}
			go s.ctl.record(rec.finish())
		}
	}
}
