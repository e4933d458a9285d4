package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listenAtSocketPath points socketPath at a fresh listening socket, closed when the test ends.
func listenAtSocketPath(t *testing.T) net.Listener {
	socketPath = filepath.Join(t.TempDir(), "channel.sock")
	ln, err := net.Listen("unix", socketPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// pipedWriter is a writer whose frames can be read from r.
func pipedWriter(t *testing.T) (r *os.File, w *writer) {
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, newWriterTo(wr)
}

// A switch request: the helper connects, writes the token first, answers on the old stream, and
// every frame after the answer goes to the socket.
func TestSwitchMovesTheWriterAfterItsAnswer(t *testing.T) {
	ln := listenAtSocketPath(t)
	r, w := pipedWriter(t)
	token := strings.Repeat("ab", 32)
	reader := switchToSocket(w, frame{typ: tSwitch, id: 5, payload: []byte(`{"token":"` + token + `"}`)}, true, false)
	if reader == nil {
		t.Fatal("switchToSocket returned nil")
	}
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	fromHelper := bufio.NewReader(conn)
	line, err := fromHelper.ReadString('\n')
	if err != nil || line != token+"\n" {
		t.Fatalf("first line on the socket: %q, %v", line, err)
	}
	answer, err := readFrame(bufio.NewReader(r))
	if err != nil || answer.typ != tResult || answer.id != 5 || string(answer.payload) != `{"transport":"socket"}` {
		t.Fatalf("answer on the old stream: %+v %q, %v", answer, answer.payload, err)
	}
	w.send(tPong, 6, []byte("after"))
	next, err := readFrame(fromHelper)
	if err != nil || next.typ != tPong || next.id != 6 || string(next.payload) != "after" {
		t.Fatalf("frame after the switch: %+v, %v", next, err)
	}
}

// No socket, or a short token: the helper answers an error on the stream it serves and stays there.
func TestSwitchRefusedStaysOnTheStream(t *testing.T) {
	socketPath = filepath.Join(t.TempDir(), "absent.sock")
	for _, payload := range []string{`{"token":"` + strings.Repeat("ab", 32) + `"}`, `{"token":"short"}`, `not json`} {
		r, w := pipedWriter(t)
		if reader := switchToSocket(w, frame{typ: tSwitch, id: 9, payload: []byte(payload)}, true, false); reader != nil {
			t.Fatalf("%s: switched without a socket", payload)
		}
		answer, err := readFrame(bufio.NewReader(r))
		if err != nil || answer.typ != tError || answer.id != 9 {
			t.Fatalf("%s: answer %+v %q, %v", payload, answer, answer.payload, err)
		}
	}
}

// A helper that stayed dumpable refuses the switch even with a socket there: nothing is dialled.
func TestSwitchRefusedWhenDumpable(t *testing.T) {
	ln := listenAtSocketPath(t)
	r, w := pipedWriter(t)
	if reader := switchToSocket(w, frame{typ: tSwitch, id: 4, payload: []byte(`{"token":"` + strings.Repeat("ab", 32) + `"}`)}, false, false); reader != nil {
		t.Fatal("a dumpable helper switched")
	}
	answer, err := readFrame(bufio.NewReader(r))
	if err != nil || answer.typ != tError || answer.id != 4 || !strings.Contains(string(answer.payload), "PR_SET_DUMPABLE") {
		t.Fatalf("answer %+v %q, %v", answer, answer.payload, err)
	}
	_ = ln.(*net.UnixListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if conn, err := ln.Accept(); err == nil {
		conn.Close()
		t.Fatal("a dumpable helper connected to the socket")
	}
}

// A second switch on a channel that already moved is refused on the socket it runs on.
func TestSwitchRefusedOnceMoved(t *testing.T) {
	socketPath = filepath.Join(t.TempDir(), "channel.sock")
	r, w := pipedWriter(t)
	payload := []byte(`{"token":"` + strings.Repeat("ab", 32) + `"}`)
	if reader := switchToSocket(w, frame{typ: tSwitch, id: 3, payload: payload}, true, true); reader != nil {
		t.Fatal("switched twice")
	}
	answer, err := readFrame(bufio.NewReader(r))
	if err != nil || answer.typ != tError || answer.id != 3 || !strings.Contains(string(answer.payload), "already runs on the socket") {
		t.Fatalf("answer %+v %q, %v", answer, answer.payload, err)
	}
}
