package main

import (
	"fmt"
	"net"
	"strings"
)

var rank = map[string]int{"allow": 0, "ask": 1, "deny": 2}

// decide is the decision of the rules for host:port, as src/egress/host-pattern.ts decideConnection:
// among the rules whose host pattern matches, the strictest wins; a deny matches whatever the
// port, allow and ask only their ports; nothing matching is a deny.
func decide(rules []Rule, host string, port int) string {
	best := ""
	for _, r := range rules {
		if !hostMatches(r.Host, host) {
			continue
		}
		if r.Decision != "deny" && !containsPort(r.Ports, port) {
			continue
		}
		if best == "" || rank[r.Decision] > rank[best] {
			best = r.Decision
		}
	}
	if best == "" {
		return "deny"
	}
	return best
}

// hostMatches: `*.x` matches any name ending in `.x` (not x itself); anything else matches itself.
func hostMatches(pattern, host string) bool {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.HasPrefix(pattern, "*.") {
		return strings.HasSuffix(name, pattern[1:]) && len(name) > len(pattern)-1
	}
	return name == pattern
}

func containsPort(ports []int, port int) bool {
	for _, p := range ports {
		if p == port {
			return true
		}
	}
	return false
}

// isIPLiteral: the gateway refuses IP literals (names only).
func isIPLiteral(host string) bool {
	return net.ParseIP(strings.Trim(host, "[]")) != nil
}

// validName: a DNS name of letters, digits, hyphens and dots (what a rule can name at all).
func validName(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return host[0] != '.' && host[0] != '-'
}

// splitTarget splits `host:port` (a CONNECT authority or a URL's host) into a lower-case host without
// a trailing dot and a port (defaultPort when absent).
func splitTarget(authority string, defaultPort int) (string, int, error) {
	host, portText, err := net.SplitHostPort(authority)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			host, portText = strings.Trim(authority, "[]"), fmt.Sprint(defaultPort)
		} else {
			return "", 0, err
		}
	}
	var port int
	if _, err := fmt.Sscanf(portText, "%d", &port); err != nil || port < 1 || port > 65535 || fmt.Sprint(port) != portText {
		return "", 0, fmt.Errorf("bad port %q", portText)
	}
	return strings.TrimSuffix(strings.ToLower(host), "."), port, nil
}
