package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// transferBed is a gateway in this process between a client and an origin on loopback: the origin
// (named localhost, its certificate signed by a CA of its own that the gateway trusts) serves
// /bytes/N over HTTP and HTTPS in 64 KiB writes, like the bench's test host; records land in recs.
type transferBed struct {
	proxy  *url.URL
	client *http.Client
	plain  string
	https  string
	mu     sync.Mutex
	recs   []seenRecord
}

// seenRecord is what the tests read of a record line.
type seenRecord struct {
	Method    string `json:"method"`
	Forwarded bool   `json:"forwarded"`
	Status    int    `json:"status"`
	BytesIn   int64  `json:"bytesIn"`
}

func newTransferBed(tb testing.TB) *transferBed {
	originCA, err := newSessionCA()
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := originCA.leaf("localhost")
	if err != nil {
		tb.Fatal(err)
	}
	origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n, cut int
		if _, err := fmt.Sscanf(r.URL.Path, "/cut/%d/%d", &n, &cut); err == nil {
			// Content-Length n, then cut bytes and the connection closes.
			conn, rw, _ := http.NewResponseController(w).Hijack()
			fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", n, strings.Repeat("x", cut))
			rw.Flush()
			conn.Close()
			return
		}
		if _, err := fmt.Sscanf(r.URL.Path, "/bytes/%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(n))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	serve := func(l net.Listener) string {
		s := &http.Server{Handler: origin, ErrorLog: quiet}
		go s.Serve(l)
		tb.Cleanup(func() { s.Close() })
		return l.Addr().(*net.TCPAddr).AddrPort().String()
	}
	listen := func() net.Listener {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		return l
	}
	plainPort := serve(listen())[len("127.0.0.1:"):]
	httpsPort := serve(tls.NewListener(listen(), &tls.Config{Certificates: []tls.Certificate{*leaf}}))[len("127.0.0.1:"):]

	ports := []int{}
	for _, p := range []string{plainPort, httpsPort} {
		var n int
		fmt.Sscanf(p, "%d", &n)
		ports = append(ports, n)
	}
	clients, _ := parseCIDRs([]string{"127.0.0.0/8"})
	ca, err := newSessionCA()
	if err != nil {
		tb.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(originCA.cert)
	stdin, _ := io.Pipe()
	out, records := io.Pipe()
	bed := &transferBed{
		plain: "http://localhost:" + plainPort,
		https: "https://localhost:" + httpsPort,
	}
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			var r seenRecord
			if json.Unmarshal([]byte(strings.TrimPrefix(lines.Text(), "WARDEN-CONN ")), &r) == nil {
				bed.mu.Lock()
				bed.recs = append(bed.recs, r)
				bed.mu.Unlock()
			}
		}
	}()
	ctl := newController(stdin, records)
	dial := newDialer(nil)
	g := &gateway{
		cfg:     &Config{Rules: []Rule{{Host: "localhost", Ports: ports, Decision: "allow"}}},
		clients: clients,
		ca:      ca,
		ctl:     ctl,
		dial:    dial,
		proxy:   newOriginProxy(dial, roots, ctl),
	}
	front := listen()
	server := &http.Server{Handler: g, ConnContext: withConnectionID, ErrorLog: quiet, MaxHeaderBytes: maxHeaderBytes}
	go server.Serve(newLimitListener(front, maxConnections))
	tb.Cleanup(func() { server.Close() })
	bed.proxy = &url.URL{Scheme: "http", Host: front.Addr().String()}

	trusted := x509.NewCertPool()
	trusted.AddCert(ca.cert)
	bed.client = &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(bed.proxy),
		TLSClientConfig: &tls.Config{RootCAs: trusted},
	}}
	tb.Cleanup(bed.client.CloseIdleConnections)
	return bed
}

// download gets base/bytes/n through the gateway, read in 1 MiB chunks as the bench's client does,
// and returns the bytes read.
func (b *transferBed) download(tb testing.TB, base string, n int) int {
	resp, err := b.client.Get(fmt.Sprintf("%s/bytes/%d", base, n))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1<<20)
	got := 0
	for {
		k, err := resp.Body.Read(buf)
		got += k
		if err == io.EOF {
			return got
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// record waits for the record of a GET of path (inside a tunnel or plain).
func (b *transferBed) record(tb testing.TB, path string) seenRecord {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		for _, r := range b.recs {
			if r.Method == "GET" {
				b.recs = nil
				b.mu.Unlock()
				return r
			}
		}
		b.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("no record of %s", path)
	return seenRecord{}
}

// A download through the gateway arrives whole, over HTTPS (an opened tunnel) and plain HTTP, and
// its record counts every byte of the body (plus the response head).
func TestTransferCountsEveryByte(t *testing.T) {
	bed := newTransferBed(t)
	const n = 5<<20 + 123
	for _, base := range []string{bed.https, bed.plain} {
		if got := bed.download(t, base, n); got != n {
			t.Fatalf("%s: got %d bytes of %d", base, got, n)
		}
		r := bed.record(t, "/bytes")
		if !r.Forwarded || r.Status != 200 || r.BytesIn < n || r.BytesIn > n+200 {
			t.Fatalf("%s: record %+v", base, r)
		}
	}
}

// A plain-HTTP body moved by the kernel (spliceBody) is followed by more requests on the same
// connection to the gateway (the origin connection is not reused: a new one is made); a body the
// origin cuts midway is cut for the sandbox too, and its record counts what arrived.
func TestSplicedBodyThenMore(t *testing.T) {
	bed := newTransferBed(t)
	for i, n := range []int{3 << 20, 100, 2<<20 + 7} {
		if got := bed.download(t, bed.plain, n); got != n {
			t.Fatalf("download %d: got %d bytes of %d", i, got, n)
		}
		if r := bed.record(t, "/bytes"); r.BytesIn < int64(n) || r.BytesIn > int64(n)+200 {
			t.Fatalf("download %d: record %+v", i, r)
		}
	}
	const n, cut = 4 << 20, 1<<20 + 5
	resp, err := bed.client.Get(fmt.Sprintf("%s/cut/%d/%d", bed.plain, n, cut))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil || got != cut {
		t.Fatalf("a cut body: got %d bytes of %d, error %v", got, cut, err)
	}
	if r := bed.record(t, "/cut"); r.BytesIn < cut || r.BytesIn > cut+200 {
		t.Fatalf("a cut body's record %+v", r)
	}
}

func benchmarkTransfer(b *testing.B, https bool) {
	bed := newTransferBed(b)
	base := bed.plain
	if https {
		base = bed.https
	}
	const n = 100 << 20
	b.SetBytes(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := bed.download(b, base, n); got != n {
			b.Fatalf("got %d bytes of %d", got, n)
		}
	}
}

// go test -bench Transfer -cpuprofile cpu.out: client, gateway and origin share this process (the
// profile's gateway part is under httputil.(*ReverseProxy) and the tunnel's TLS server).
func BenchmarkTransferHTTPS(b *testing.B) { benchmarkTransfer(b, true) }
func BenchmarkTransferPlain(b *testing.B) { benchmarkTransfer(b, false) }
