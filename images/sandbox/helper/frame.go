// Frame codec of the warden channel: every message is
//
//	[u32 big-endian payload length][u8 type][u32 big-endian request id][payload]
//
// so the controller always knows where a frame ends; bytes a command prints travel only inside
// a payload and can never be read as a header. Mirrors src/sandbox/channel/protocol/frame.ts;
// testdata/frames.json holds the vectors both sides' tests check (frame_vectors_test.go,
// test/unit/sandbox/channel/protocol/frame-vectors.test.ts).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

const headerBytes = 9

// maxPayload bounds one frame (64 MiB); a larger length means a corrupt stream.
const maxPayload = 64 << 20

// Controller -> helper.
const (
	tPing     byte = 0x01
	tExec     byte = 0x02
	tKill     byte = 0x03
	tRead     byte = 0x04
	tWrite    byte = 0x05
	tStat     byte = 0x06
	tRealpath byte = 0x07
	tListDir  byte = 0x08
	tUntar    byte = 0x09
	// 0x0a is tSwitch (socket.go).
	// tSpawn and tKeep (protocol version 9): background processes (spawn.go).
	tSpawn byte = 0x0b
	tKeep  byte = 0x0c
)

// Helper -> controller.
const (
	tPong   byte = 0x41
	tStdout byte = 0x42
	tStderr byte = 0x43
	tExit   byte = 0x44
	tResult byte = 0x45
	tError  byte = 0x46
)

type frame struct {
	typ     byte
	id      uint32
	payload []byte
}

func readFrame(r *bufio.Reader) (frame, error) {
	var h [headerBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[0:4])
	if n > maxPayload {
		return frame{}, fmt.Errorf("frame payload of %d bytes exceeds %d", n, maxPayload)
	}
	f := frame{typ: h[4], id: binary.BigEndian.Uint32(h[5:9]), payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, err
	}
	return f, nil
}

func encodeHeader(dst []byte, typ byte, id uint32, n int) {
	binary.BigEndian.PutUint32(dst[0:4], uint32(n))
	dst[4] = typ
	binary.BigEndian.PutUint32(dst[5:9], id)
}

// splitJSONData splits a [u32 json length][json][data] payload.
func splitJSONData(p []byte, v interface{}) ([]byte, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("payload too short")
	}
	n := binary.BigEndian.Uint32(p[0:4])
	if uint64(n) > uint64(len(p)-4) {
		return nil, fmt.Errorf("json length %d exceeds payload", n)
	}
	if err := json.Unmarshal(p[4:4+n], v); err != nil {
		return nil, err
	}
	return p[4+n:], nil
}

// joinJSONData builds a [u32 json length][json][data] payload.
func joinJSONData(v interface{}, data []byte) []byte {
	j, _ := json.Marshal(v)
	out := make([]byte, 4+len(j)+len(data))
	binary.BigEndian.PutUint32(out[0:4], uint32(len(j)))
	copy(out[4:], j)
	copy(out[4+len(j):], data)
	return out
}
