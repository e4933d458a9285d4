package main

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is the sandbox's resolver (the sandbox container's DNS server is the gateway's address
// on the session network, src/egress/gateway.ts sandboxNetworkConfig). It answers a name that an
// allow or ask rule names (on any port), and that no deny rule names, with the gateway's own
// address, never the name's real one: a client that resolves a name before it connects through
// the proxy works, and the connection still goes through the proxy's checks. Every other name is
// NXDOMAIN, and nothing is ever forwarded to a real resolver, so a name cannot carry data out.
// Messages are parsed and built with golang.org/x/net/dns/dnsmessage.
type dnsServer struct {
	rules []Rule
	addr  net.IP
}

// dnsTTL is the answers' time to live, in seconds.
const dnsTTL = 10

// nameListed: some allow or ask rule matches host, and no deny rule does (a deny names a domain
// whatever the port).
func nameListed(rules []Rule, host string) bool {
	listed := false
	for _, r := range rules {
		if !hostMatches(r.Host, host) {
			continue
		}
		if r.Decision == "deny" {
			return false
		}
		listed = true
	}
	return listed
}

// answer is the response to one query message, or nil for a message that is not a query.
func (d *dnsServer) answer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	header := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RCode: dnsmessage.RCodeSuccess}
	listed := q.Class == dnsmessage.ClassINET && nameListed(d.rules, name)
	if !listed {
		header.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), header)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil
	}
	if listed && q.Type == dnsmessage.TypeA {
		var a dnsmessage.AResource
		copy(a.A[:], d.addr.To4())
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if b.AResource(rh, a) != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// serveUDP answers datagrams on conn until it is closed.
func (d *dnsServer) serveUDP(conn net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if out := d.answer(buf[:n]); out != nil {
			_, _ = conn.WriteTo(out, from)
		}
	}
}

// serveTCP answers length-prefixed messages (RFC 1035 §4.2.2) on each connection.
func (d *dnsServer) serveTCP(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			for {
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				var size [2]byte
				if _, err := io.ReadFull(conn, size[:]); err != nil {
					return
				}
				msg := make([]byte, binary.BigEndian.Uint16(size[:]))
				if _, err := io.ReadFull(conn, msg); err != nil {
					return
				}
				out := d.answer(msg)
				if out == nil {
					return
				}
				framed := binary.BigEndian.AppendUint16(nil, uint16(len(out)))
				if _, err := conn.Write(append(framed, out...)); err != nil {
					return
				}
			}
		}()
	}
}
