package main

import (
	"encoding/json"
	"net"
	"os"
	"testing"
)

// The controller and the gateway decide alike: test/fixtures/host-decisions.json is read by this
// test and by test/unit/egress/connection-records.test.ts.
func TestDecideAgreesWithTheController(t *testing.T) {
	raw, err := os.ReadFile("../../test/fixtures/host-decisions.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Rules []Rule `json:"rules"`
		Cases []struct {
			Host     string `json:"host"`
			Port     int    `json:"port"`
			Decision string `json:"decision"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	for _, c := range corpus.Cases {
		if got := decide(corpus.Rules, c.Host, c.Port); got != c.Decision {
			t.Errorf("decide(%s, %d) = %s, want %s", c.Host, c.Port, got, c.Decision)
		}
	}
}

func TestSplitTarget(t *testing.T) {
	cases := []struct {
		in   string
		host string
		port int
		bad  bool
	}{
		{"Example.ORG:443", "example.org", 443, false},
		{"example.org.", "example.org", 80, false},
		{"[::1]:443", "::1", 443, false},
		{"example.org:0", "", 0, true},
		{"example.org:65536", "", 0, true},
		{"example.org:+443", "", 0, true},
		{"example.org:0443", "", 0, true},
	}
	for _, c := range cases {
		host, port, err := splitTarget(c.in, 80)
		if (err != nil) != c.bad || host != c.host || port != c.port {
			t.Errorf("splitTarget(%q) = %q, %d, %v", c.in, host, port, err)
		}
	}
}

func TestRefusedRangesCoverMappedAddresses(t *testing.T) {
	set, err := parseCIDRs([]string{"127.0.0.0/8", "10.0.0.0/8", "fc00::/7"})
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{"127.0.0.1": true, "::ffff:127.0.0.1": true, "::ffff:10.1.2.3": true, "fd00::1": true, "192.0.2.1": false} {
		if got := set.contains(net.ParseIP(ip)); got != want {
			t.Errorf("contains(%s) = %v, want %v", ip, got, want)
		}
	}
}
