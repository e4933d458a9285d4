// Socket transport (protocol version 6). On Docker the channel first runs on the container's
// attach stream, where every frame passes two more processes each way (the server's socket to
// dockerd, a FIFO to containerd-shim, a pipe to the helper): under load each of them is one more
// process to wake per frame. A `switch` request moves the channel onto a unix socket that the
// controller listens on, in a host directory bind-mounted read-only at socketDir, so frames go
// from the controller's process to the helper's in one hop.
//
// Trust: the request arrives on the attach stream, which only the controller holds (the helper
// is not dumpable: no command can open its fds), and carries a one-time token that the helper
// writes first on the socket; the controller serves only the connection that presents it. A
// command that connects to the socket itself gets nothing without the token, and the helper
// dials only socketPath, never a path from the request.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"time"
)

// tSwitch (controller -> helper): move the channel to the unix socket; body {"token": "<hex>"}.
const tSwitch byte = 0x0a

// socketPath is where the controller's listening socket appears in the container (a variable for tests).
var socketPath = "/run/warden-channel/channel.sock"

// switchDialTimeout bounds connecting to the controller's socket.
const switchDialTimeout = 5 * time.Second

type switchRequest struct {
	Token string `json:"token"`
}

// switchToSocket serves a switch request: connect, present the token, answer on the old stream,
// then move the writer onto the socket. Returns a reader of the socket, or nil when the channel
// stays where it is (the reason went back as an error frame). A helper that could not make itself
// non-dumpable refuses: a command could read the token from its memory; so does one whose channel
// already runs on the socket (`moved`): the connection in use would be left open.
func switchToSocket(w *writer, f frame, notDumpable, moved bool) *bufio.Reader {
	if moved {
		w.sendError(f.id, errors.New("the channel already runs on the socket"))
		return nil
	}
	if !notDumpable {
		w.sendError(f.id, errors.New("refusing the switch: prctl(PR_SET_DUMPABLE, 0) failed, so commands could read the token"))
		return nil
	}
	var req switchRequest
	if err := json.Unmarshal(f.payload, &req); err != nil || len(req.Token) < 32 {
		w.sendError(f.id, errors.New("bad switch request: a token of 32 or more characters is needed"))
		return nil
	}
	conn, err := net.DialTimeout("unix", socketPath, switchDialTimeout)
	if err != nil {
		w.sendError(f.id, err)
		return nil
	}
	if _, err := conn.Write([]byte(req.Token + "\n")); err != nil {
		_ = conn.Close()
		w.sendError(f.id, err)
		return nil
	}
	// The answer is the last frame on the old stream; every later one goes to the socket.
	j, _ := json.Marshal(map[string]string{"transport": "socket"})
	w.switchTo(tResult, f.id, j, conn)
	return bufio.NewReaderSize(conn, 256<<10)
}
