package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// controller is the gateway's only line to warden's controller, its attached stdio (so nothing
// depends on a host path and any engine that can attach works):
//   - stdout: `WARDEN-ASK <id> <host> <port> <client port>` for a connection under an ask rule,
//     `WARDEN-SECRET <id> <method> <host> <port> <path> <header…>` for a request carrying a
//     placeholder, and `WARDEN-CONN <json>` per connection or request (record.go);
//   - stdin: `WARDEN-ANSWER <id> OK|ERR <outcome>` and `WARDEN-SECRET-ANSWER <id> OK|ERR <pairs>`,
//     `WARDEN-ACK <seq>` (the controller has every record up to seq) and `WARDEN-REPLAY` (a
//     controller that has just attached asks for every record not acknowledged yet).
//
// Records are kept until acknowledged (maxUnacked and maxUnackedBytes at most, the oldest dropped
// past them): stdout
// written while no controller is attached (`warden serve` down) is lost, so a restarted
// controller's REPLAY recovers the connections that ended meanwhile.
//
// Protocol: src/egress/ask-relay.ts and secret-relay.ts. Fail closed: every question is refused
// (`no-controller`) once stdin has ended, and (`gateway-timeout`) when no answer came in time.
type controller struct {
	out     io.Writer
	writeMu sync.Mutex

	recMu        sync.Mutex
	seq          uint64
	unacked      []pendingRecord
	unackedBytes int

	mu      sync.Mutex
	gone    bool
	pending map[string]chan answer
	counter uint64
}

// answer is one answer line: ok (OK or ERR) and the rest of the line after it.
type answer struct {
	ok   bool
	rest string
}

// pendingRecord is a record line not yet acknowledged.
type pendingRecord struct {
	seq  uint64
	line string
}

// The records kept for a controller that attaches later: at most this many, and this many bytes.
const (
	maxUnacked      = 10_000
	maxUnackedBytes = 4 << 20
)

var (
	ackLine      = regexp.MustCompile(`^WARDEN-ACK ([0-9]{1,20})$`)
	askAnswer    = regexp.MustCompile(`^WARDEN-ANSWER (q[0-9a-f]{1,40}) (OK|ERR) ([a-z-]{1,32})$`)
	secretAnswer = regexp.MustCompile(`^WARDEN-SECRET-ANSWER (s[0-9a-f]{1,40}) (OK|ERR)(?: (.*))?$`)
)

const secretDeadline = 10 * time.Second

func newController(in io.Reader, out io.Writer) *controller {
	c := &controller{out: out, pending: map[string]chan answer{}}
	go c.read(in)
	return c
}

func (c *controller) read(in io.Reader) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := scanner.Text()
		if m := ackLine.FindStringSubmatch(line); m != nil {
			c.ack(m[1])
		} else if line == "WARDEN-REPLAY" {
			c.replay()
		} else if m := askAnswer.FindStringSubmatch(line); m != nil {
			c.deliver(m[1], answer{ok: m[2] == "OK", rest: m[3]})
		} else if m := secretAnswer.FindStringSubmatch(line); m != nil {
			c.deliver(m[1], answer{ok: m[2] == "OK", rest: m[3]})
		}
	}
	c.mu.Lock()
	c.gone = true
	for id, ch := range c.pending {
		delete(c.pending, id)
		close(ch)
	}
	c.mu.Unlock()
}

func (c *controller) deliver(id string, a answer) {
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		ch <- a
	}
}

// line writes one whole line to stdout (lines of concurrent writers never interleave).
func (c *controller) line(text string) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, _ = io.WriteString(c.out, text+"\n")
}

// record writes one WARDEN-CONN line with the next sequence number, and keeps it until acknowledged.
func (c *controller) record(r *record) {
	c.recMu.Lock()
	defer c.recMu.Unlock()
	c.seq++
	r.Seq = c.seq
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	line := "WARDEN-CONN " + string(data)
	c.unacked = append(c.unacked, pendingRecord{seq: c.seq, line: line})
	c.unackedBytes += len(line)
	for len(c.unacked) > maxUnacked || c.unackedBytes > maxUnackedBytes {
		c.unackedBytes -= len(c.unacked[0].line)
		c.unacked = c.unacked[1:]
	}
	c.line(line)
}

// ack forgets the records up to seq.
func (c *controller) ack(text string) {
	seq, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return
	}
	c.recMu.Lock()
	defer c.recMu.Unlock()
	n := 0
	for n < len(c.unacked) && c.unacked[n].seq <= seq {
		c.unackedBytes -= len(c.unacked[n].line)
		n++
	}
	c.unacked = append([]pendingRecord(nil), c.unacked[n:]...)
}

// replay writes every record not acknowledged yet again, in order.
func (c *controller) replay() {
	c.recMu.Lock()
	defer c.recMu.Unlock()
	for _, p := range c.unacked {
		c.line(p.line)
	}
}

// ask sends a question and waits for its answer: the kind letter (`q` or `s`) starts its id, which
// carries 64 random bits, so nothing the sandbox writes can name a question it did not see. A
// closed controller answers ERR no-controller, a silent one ERR gateway-timeout.
func (c *controller) ask(kind string, fields string, deadline time.Duration) answer {
	var random [8]byte
	if _, err := rand.Read(random[:]); err != nil {
		return answer{ok: false, rest: "gateway-error"}
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return answer{ok: false, rest: "no-controller"}
	}
	c.counter++
	id := fmt.Sprintf("%s%x%s", kind, c.counter, hex.EncodeToString(random[:]))
	ch := make(chan answer, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	tag := "WARDEN-ASK"
	if kind == "s" {
		tag = "WARDEN-SECRET"
	}
	c.line(fmt.Sprintf("%s %s %s", tag, id, fields))
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case a, ok := <-ch:
		if !ok {
			return answer{ok: false, rest: "no-controller"}
		}
		return a
	case <-timer.C:
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return answer{ok: false, rest: "gateway-timeout"}
	}
}

// stderr lines: the session CA and readiness, read by src/egress/gateway.ts.
func announce(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
