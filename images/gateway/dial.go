package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// errRefusedAddress: the name resolved to an address the gateway never connects to.
var errRefusedAddress = errors.New("refused address")

// errUnresolved: the name has no address.
var errUnresolved = errors.New("name does not resolve")

// dialer connects to origins by name only through checked addresses: it resolves the name itself
// every time it connects, refuses when any address is in the refused ranges, and connects only to
// the addresses it checked; the socket's Control checks the address actually connected to once
// more. So a name whose records change between the rule check and the connection (DNS rebinding)
// is judged by the address used, every time.
type dialer struct {
	refused  cidrSet
	resolver *net.Resolver
	net      net.Dialer
}

func newDialer(refused cidrSet) *dialer {
	d := &dialer{refused: refused, resolver: net.DefaultResolver}
	d.net = net.Dialer{
		Timeout:   15 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(host)
			if ip == nil || refused.contains(ip) {
				return fmt.Errorf("%w: %s", errRefusedAddress, host)
			}
			return nil
		},
	}
	return d
}

// check resolves host and returns its addresses, or errRefusedAddress / errUnresolved.
func (d *dialer) check(ctx context.Context, host string) ([]net.IP, error) {
	addrs, err := d.resolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s", errUnresolved, host)
	}
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if d.refused.contains(a.IP) {
			return nil, fmt.Errorf("%w: %s is %s", errRefusedAddress, host, a.IP)
		}
		ips = append(ips, a.IP)
	}
	return ips, nil
}

// DialContext is the origin transport's dial (address `host:port`, a name).
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ips, err := d.check(ctx, host)
	if err != nil {
		return nil, err
	}
	var last error
	for _, ip := range ips {
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}
