package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A controller on pipes: questions come out with random ids, answers must name them (and their
// kind), no answer in time is gateway-timeout, and once stdin ends every open and later question
// is no-controller.
func TestControllerRelaysAndFailsClosed(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := newController(inR, outW)
	lines := bufio.NewScanner(outR)
	next := func() string {
		if !lines.Scan() {
			t.Fatal("no line")
		}
		return lines.Text()
	}
	question := regexp.MustCompile(`^WARDEN-(ASK|SECRET) ([qs]1?[0-9a-f]*) (.*)$`)

	got := make(chan answer, 1)
	go func() { got <- c.ask("q", "ask.test 443 40112", time.Minute) }()
	m := question.FindStringSubmatch(next())
	if m == nil || m[1] != "ASK" || m[3] != "ask.test 443 40112" || !regexp.MustCompile(`^q1[0-9a-f]{16}$`).MatchString(m[2]) {
		t.Fatalf("question %v", m)
	}
	// An answer to an id never asked, and one of the other kind, are ignored.
	io.WriteString(inW, "WARDEN-ANSWER q1 OK once\n")
	io.WriteString(inW, "WARDEN-SECRET-ANSWER s"+m[2][1:]+" OK\n")
	io.WriteString(inW, "WARDEN-ANSWER "+m[2]+" OK once\n")
	if a := <-got; !a.ok || a.rest != "once" {
		t.Fatalf("answer %+v", a)
	}

	go func() { got <- c.ask("q", "ask.test 80 40113", 300*time.Millisecond) }()
	next()
	if a := <-got; a.ok || a.rest != "gateway-timeout" {
		t.Fatalf("deadline answer %+v", a)
	}

	go func() { got <- c.ask("s", "GET a.test 443 / -", time.Minute) }()
	if line := next(); !strings.HasPrefix(line, "WARDEN-SECRET s3") {
		t.Fatalf("secret question %q", line)
	}
	inW.Close()
	if a := <-got; a.ok || a.rest != "no-controller" {
		t.Fatalf("open question after stdin ended: %+v", a)
	}
	if a := c.ask("q", "ask.test 443 40115", time.Minute); a.ok || a.rest != "no-controller" {
		t.Fatalf("later question: %+v", a)
	}
}

// Records stay until acknowledged; REPLAY writes the others again, in order.
func TestControllerReplaysUnacknowledgedRecords(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := newController(inR, outW)
	lines := bufio.NewScanner(outR)
	go func() {
		for i := 0; i < 3; i++ {
			c.record(newRecord("GET", "a.test", 80).finish())
		}
	}()
	for i := 1; i <= 3; i++ {
		if !lines.Scan() || !strings.Contains(lines.Text(), `"seq":`+strconv.Itoa(i)+`,`) {
			t.Fatalf("record %d: %q", i, lines.Text())
		}
	}
	io.WriteString(inW, "WARDEN-ACK 2\nWARDEN-REPLAY\n")
	if !lines.Scan() || !strings.Contains(lines.Text(), `"seq":3,`) {
		t.Fatalf("replayed %q", lines.Text())
	}
	go c.record(newRecord("GET", "a.test", 80).finish())
	if !lines.Scan() || !strings.Contains(lines.Text(), `"seq":4,`) {
		t.Fatalf("after replay %q", lines.Text())
	}
	inW.Close()
}

// Kept records are bounded by bytes as well as by count, and a record's host by a name's size: a
// controller that never acknowledges (serve down) holds at most maxUnackedBytes of lines, newest kept.
func TestUnacknowledgedRecordsAreBoundedByBytes(t *testing.T) {
	stdin, _ := io.Pipe()
	c := newController(stdin, io.Discard)
	host := strings.Repeat("a", 60_000)
	for i := 0; i < maxUnacked; i++ {
		c.record(newRecord("CONNECT", host, 443).finish())
	}
	held := 0
	for _, p := range c.unacked {
		held += len(p.line)
	}
	if held != c.unackedBytes || held > maxUnackedBytes || c.unacked[len(c.unacked)-1].seq != maxUnacked {
		t.Fatalf("held %d bytes (counted %d) in %d records, last seq %d", held, c.unackedBytes, len(c.unacked), c.unacked[len(c.unacked)-1].seq)
	}
	if !strings.Contains(c.unacked[0].line, `"host":"`+strings.Repeat("a", maxRecordField)+`"`) {
		t.Fatalf("a record's host is not clipped to %d bytes", maxRecordField)
	}
}
