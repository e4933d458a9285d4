// Command warden-gateway is warden's per-session egress gateway (images/gateway): an HTTP proxy on
// the session's internal network that lets through only what the session's rules allow, opens TLS
// tunnels with a session CA to check the requests inside, and reports every connection to warden's
// controller over its stdio (controller.go). Configuration: WARDEN_GATEWAY_CONFIG (config.go).
package main

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "warden-gateway: %v\n", err)
		os.Exit(78)
	}
}

func run() error {
	cfg, err := loadConfig(os.Getenv("WARDEN_GATEWAY_CONFIG"))
	if err != nil {
		return err
	}
	clients, err := parseCIDRs(cfg.ClientCIDRs)
	if err != nil {
		return fmt.Errorf("clientCidrs: %w", err)
	}
	refused, err := parseCIDRs(cfg.RefusedCIDRs)
	if err != nil {
		return fmt.Errorf("refusedCidrs: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if cfg.UpstreamCA != "" && !roots.AppendCertsFromPEM([]byte(cfg.UpstreamCA)) {
		return fmt.Errorf("upstreamCa holds no PEM certificate")
	}
	ca, err := newSessionCA()
	if err != nil {
		return fmt.Errorf("cannot make the session CA: %w", err)
	}
	dial := newDialer(refused)
	ctl := newController(os.Stdin, os.Stdout)
	g := &gateway{
		cfg:     cfg,
		clients: clients,
		ca:      ca,
		ctl:     ctl,
		dial:    dial,
		proxy:   newOriginProxy(dial, roots, ctl),
	}
	// Both listen on the session network only: nothing on an egress network can reach them.
	local, err := sessionAddress(clients)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(local.String(), fmt.Sprint(cfg.Port)))
	if err != nil {
		return err
	}
	dns := &dnsServer{rules: cfg.Rules, addr: local}
	udp, err := net.ListenPacket("udp", net.JoinHostPort(local.String(), "53"))
	if err != nil {
		return fmt.Errorf("DNS: %w", err)
	}
	tcp, err := net.Listen("tcp", net.JoinHostPort(local.String(), "53"))
	if err != nil {
		return fmt.Errorf("DNS: %w", err)
	}
	go dns.serveUDP(udp)
	go dns.serveTCP(tcp)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		os.Exit(0)
	}()
	announce("WARDEN-SESSION-CA %s", base64.StdEncoding.EncodeToString(ca.certPEM))
	announce("WARDEN-GATEWAY-READY %d", cfg.Port)
	server := &http.Server{
		Handler:                      g,
		ConnState:                    newSilentConns(g.ctl).track,
		ConnContext:                  withConnectionID,
		ReadHeaderTimeout:            10 * time.Second,
		IdleTimeout:                  120 * time.Second,
		MaxHeaderBytes:               maxHeaderBytes,
		ErrorLog:                     quiet,
		DisableGeneralOptionsHandler: true,
	}
	// At most maxConnections at once: the sandbox cannot make its gateway hold more (each may hold
	// a header of up to maxHeaderBytes), the others wait in the listen queue.
	return server.Serve(newLimitListener(listener, maxConnections))
}

const (
	// maxConnections bounds the sandbox's open connections to its gateway.
	maxConnections = 1024
	// maxHeaderBytes bounds a request's head (a proxy needs no more; Go's default is 1 MiB).
	maxHeaderBytes = 32 << 10
)

// sessionAddress is this container's IPv4 address on the session network (within clients).
func sessionAddress(clients cidrSet) (net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && clients.contains(n.IP) {
			return n.IP.To4(), nil
		}
	}
	return nil, fmt.Errorf("no address on the session network %v", clients)
}
