package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strings"
)

// Rule is one domain rule of the session (src/egress/types.ts NetworkRule): Host is a lower-case
// name or `*.domain` (any subdomain, not the bare domain), Ports the TCP ports it covers (a deny
// covers every port), Decision "allow", "ask" or "deny".
type Rule struct {
	Host     string `json:"host"`
	Ports    []int  `json:"ports"`
	Decision string `json:"decision"`
}

// Config is what warden's controller passes in WARDEN_GATEWAY_CONFIG (base64 JSON), written by
// src/egress/gateway-config.ts.
type Config struct {
	// Port the proxy listens on (3128).
	Port int `json:"port"`
	// Rules, in any order: the strictest matching decision wins (deny > ask > allow).
	Rules []Rule `json:"rules"`
	// RefusedCIDRs are never connected to, whatever a name resolves to.
	RefusedCIDRs []string `json:"refusedCidrs"`
	// ClientCIDRs may use the proxy: the session's internal network.
	ClientCIDRs []string `json:"clientCidrs"`
	// SecretHeaders are the lower-case header names whose placeholders the controller replaces.
	SecretHeaders []string `json:"secretHeaders"`
	// UpstreamCA is PEM of extra CAs trusted for origins, besides the system's.
	UpstreamCA string `json:"upstreamCa"`
	// AskDeadlineMs bounds the wait for an ask answer (the controller answers first).
	AskDeadlineMs int `json:"askDeadlineMs"`
}

func loadConfig(encoded string) (*Config, error) {
	if encoded == "" {
		return nil, fmt.Errorf("WARDEN_GATEWAY_CONFIG is not set")
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("WARDEN_GATEWAY_CONFIG is not base64: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("WARDEN_GATEWAY_CONFIG is not the expected JSON: %w", err)
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("config port %d is not a TCP port", cfg.Port)
	}
	if cfg.AskDeadlineMs <= 0 {
		cfg.AskDeadlineMs = 330_000
	}
	for i, r := range cfg.Rules {
		if r.Decision != "allow" && r.Decision != "ask" && r.Decision != "deny" {
			return nil, fmt.Errorf("rule %d has decision %q, not allow, ask or deny", i, r.Decision)
		}
	}
	return &cfg, nil
}

// cidrSet is a list of networks; contains answers for IPv4, IPv4-mapped IPv6 and IPv6 alike.
type cidrSet []*net.IPNet

func parseCIDRs(list []string) (cidrSet, error) {
	out := make(cidrSet, 0, len(list))
	for _, s := range list {
		_, n, err := net.ParseCIDR(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("bad CIDR %q: %w", s, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func (s cidrSet) contains(ip net.IP) bool {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	for _, n := range s {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
