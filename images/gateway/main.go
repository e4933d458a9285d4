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
	listener, err := net.Listen("tcp", fmt.Sprintf(":%d", cfg.Port))
	if err != nil {
		return err
	}
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
		ReadHeaderTimeout:            30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		MaxHeaderBytes:               64 << 10,
		ErrorLog:                     quiet,
		DisableGeneralOptionsHandler: true,
	}
	return server.Serve(listener)
}
