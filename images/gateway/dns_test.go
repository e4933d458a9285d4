package main

import (
	"net"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func query(t *testing.T, name string, qtype dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: qtype, Class: dnsmessage.ClassINET})
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Listed names get the gateway's address (A) or no data (AAAA); denied and unlisted names NXDOMAIN.
func TestDNSAnswersListedNamesWithTheGateway(t *testing.T) {
	d := &dnsServer{
		rules: []Rule{
			{Host: "pypi.org", Ports: []int{443}, Decision: "allow"},
			{Host: "*.example", Ports: []int{443}, Decision: "ask"},
			{Host: "bad.example", Ports: []int{443}, Decision: "deny"},
		},
		addr: net.ParseIP("172.30.0.2"),
	}
	cases := []struct {
		name    string
		qtype   dnsmessage.Type
		rcode   dnsmessage.RCode
		answers int
	}{
		{"PyPI.org.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1},
		{"pypi.org.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 0},
		{"a.example.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1},
		{"example.", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0},
		{"bad.example.", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0},
		{"data-to-leak.other.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0},
	}
	for _, c := range cases {
		var p dnsmessage.Parser
		h, err := p.Start(d.answer(query(t, c.name, c.qtype)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p.SkipAllQuestions()
		answers, _ := p.AllAnswers()
		if h.ID != 7 || !h.Response || h.RCode != c.rcode || len(answers) != c.answers {
			t.Errorf("%s %v: rcode %v, %d answers", c.name, c.qtype, h.RCode, len(answers))
		}
		if c.answers == 1 {
			a := answers[0].Body.(*dnsmessage.AResource)
			if net.IP(a.A[:]).String() != "172.30.0.2" || answers[0].Header.TTL != dnsTTL {
				t.Errorf("%s: answer %v", c.name, answers[0])
			}
		}
	}
	if d.answer([]byte{1, 2, 3}) != nil {
		t.Error("a malformed message got an answer")
	}
}
