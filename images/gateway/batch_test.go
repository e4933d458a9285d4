package main

import (
	"bytes"
	"net"
	"testing"
)

// countedConn records each write it gets.
type countedConn struct {
	net.Conn
	writes [][]byte
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Between begin and end, a batchConn's writes leave in one write, in order; outside, each goes
// straight through; past its buffer, what it kept goes first.
func TestBatchConnSendsOneWriteTogether(t *testing.T) {
	under := &countedConn{}
	c := &batchConn{Conn: under}
	c.Write([]byte("alert"))
	c.begin()
	for _, s := range []string{"rec1", "rec2", "rec3"} {
		c.Write([]byte(s))
	}
	if len(under.writes) != 1 {
		t.Fatalf("kept writes went out before end: %q", under.writes)
	}
	if err := c.end(); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("after"))
	want := []string{"alert", "rec1rec2rec3", "after"}
	if len(under.writes) != len(want) {
		t.Fatalf("writes %q, want %q", under.writes, want)
	}
	for i, w := range want {
		if string(under.writes[i]) != w {
			t.Fatalf("write %d is %q, want %q", i, under.writes[i], w)
		}
	}
	under.writes = nil
	c.begin()
	c.Write([]byte("head"))
	big := bytes.Repeat([]byte("x"), copyBufferSize+minFill+1024)
	c.Write(big)
	c.end()
	if len(under.writes) != 2 || string(under.writes[0]) != "head" || !bytes.Equal(under.writes[1], big) {
		t.Fatalf("a write past the buffer: %d writes", len(under.writes))
	}
}
