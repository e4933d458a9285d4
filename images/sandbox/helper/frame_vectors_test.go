package main

// The shared frame vectors (testdata/frames.json), also read by the controller's
// test/unit/sandbox/channel/protocol/frame-vectors.test.ts: both ends of the channel must encode and decode the
// same bytes, so the two codecs (this one and src/sandbox/channel/protocol/frame.ts) cannot drift.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"
)

type vectorPayload struct {
	Text *string `json:"text"`
	Hex  *string `json:"hex"`
	Fill *byte   `json:"fill"`
	Len  int     `json:"length"`
}

type frameVector struct {
	Name      string          `json:"name"`
	Direction string          `json:"direction"`
	Type      string          `json:"type"`
	ID        uint32          `json:"id"`
	Header    string          `json:"header"`
	Payload   vectorPayload   `json:"payload"`
	Schema    string          `json:"schema"`
	Body      json.RawMessage `json:"body"`
	Data      *string         `json:"data"`
}

type hexVector struct {
	Name string `json:"name"`
	Hex  string `json:"hex"`
}

type frameVectors struct {
	HeaderBytes      int             `json:"headerBytes"`
	MaxPayloadBytes  int             `json:"maxPayloadBytes"`
	Types            map[string]byte `json:"types"`
	Frames           []frameVector   `json:"frames"`
	RejectedFrames   []hexVector     `json:"rejectedFrames"`
	RejectedJSONData []hexVector     `json:"rejectedJsonData"`
	Incomplete       []hexVector     `json:"incomplete"`
}

func loadVectors(t *testing.T) frameVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/frames.json")
	if err != nil {
		t.Fatal(err)
	}
	var v frameVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (p vectorPayload) bytes(t *testing.T) []byte {
	switch {
	case p.Text != nil:
		return []byte(*p.Text)
	case p.Hex != nil:
		return mustHex(t, *p.Hex)
	case p.Fill != nil:
		return bytes.Repeat([]byte{*p.Fill}, p.Len)
	}
	t.Fatal("payload has neither text, hex nor fill")
	return nil
}

// schemaValue is the helper's Go type for a body schema (what it decodes or sends).
func schemaValue(schema string) interface{} {
	switch schema {
	case "exec":
		return &execRequest{}
	case "kill":
		return &killRequest{}
	case "read":
		return &readRequest{}
	case "write":
		return &writeRequest{}
	case "path":
		return &pathRequest{}
	case "untar":
		return &untarRequest{}
	case "pong":
		return &map[string]interface{}{}
	case "exit":
		return &exitBody{}
	case "error":
		return &opError{}
	case "readResult":
		return &readResult{}
	case "stat":
		var s *statBody
		return &s
	case "realpath":
		var s string
		return &s
	case "listDir":
		return &[]dirEntry{}
	case "empty":
		return &struct{}{}
	case "spawnResult":
		return &spawnResult{}
	case "keepResult":
		return &keepResult{}
	}
	return nil
}

func TestFrameVectorTypesMatchConstants(t *testing.T) {
	v := loadVectors(t)
	want := map[string]byte{
		"ping": tPing, "exec": tExec, "kill": tKill, "read": tRead, "write": tWrite, "stat": tStat,
		"realpath": tRealpath, "listDir": tListDir, "untar": tUntar, "switch": tSwitch, "spawn": tSpawn, "keep": tKeep,
		"pong": tPong, "stdout": tStdout,
		"stderr": tStderr, "exit": tExit, "result": tResult, "error": tError,
	}
	if !reflect.DeepEqual(v.Types, want) {
		t.Fatalf("frame types differ: vectors %v, helper %v", v.Types, want)
	}
	if v.HeaderBytes != headerBytes || v.MaxPayloadBytes != maxPayload {
		t.Fatalf("header %d / max payload %d, helper has %d / %d", v.HeaderBytes, v.MaxPayloadBytes, headerBytes, maxPayload)
	}
}

func TestFrameVectorsDecode(t *testing.T) {
	v := loadVectors(t)
	for _, fv := range v.Frames {
		payload := fv.Payload.bytes(t)
		stream := append(mustHex(t, fv.Header), payload...)
		f, err := readFrame(bufio.NewReader(bytes.NewReader(stream)))
		if err != nil {
			t.Fatalf("%s: %v", fv.Name, err)
		}
		if f.typ != v.Types[fv.Type] || f.id != fv.ID || !bytes.Equal(f.payload, payload) {
			t.Fatalf("%s: decoded type %#x id %d (%d bytes)", fv.Name, f.typ, f.id, len(f.payload))
		}
		if fv.Schema != "" && fv.Direction == "controller-to-helper" {
			checkRequestBody(t, fv, payload)
		}
	}
}

// The spawn and keep vectors (protocol version 9) have a body but no schema (the controller's
// test sends no such request yet): the helper reads every field the body names, with its value.
func TestFrameVectorsOfBackgroundProcesses(t *testing.T) {
	v := loadVectors(t)
	seen := map[string]bool{}
	for _, fv := range v.Frames {
		var target interface{}
		switch fv.Type {
		case "spawn":
			target = &procConfig{}
		case "keep":
			target = &keepRequest{}
		default:
			continue
		}
		if err := json.Unmarshal(fv.Payload.bytes(t), target); err != nil {
			t.Fatalf("%s: %v", fv.Name, err)
		}
		again, _ := json.Marshal(target)
		var got, want map[string]interface{}
		_ = json.Unmarshal(again, &got)
		_ = json.Unmarshal(fv.Body, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the helper reads %v, the vector says %v", fv.Name, got, want)
		}
		seen[fv.Type] = true
	}
	if !seen["spawn"] || !seen["keep"] {
		t.Fatalf("vectors of spawn and keep: %v", seen)
	}
}

// checkRequestBody decodes a controller's request as the helper does and checks every field the
// vector names arrives under the helper's JSON names, with the vector's value.
func checkRequestBody(t *testing.T, fv frameVector, payload []byte) {
	t.Helper()
	target := schemaValue(fv.Schema)
	if fv.Data != nil {
		data, err := splitJSONData(payload, target)
		if err != nil {
			t.Fatalf("%s: %v", fv.Name, err)
		}
		if !bytes.Equal(data, mustHex(t, *fv.Data)) {
			t.Fatalf("%s: data %x, want %s", fv.Name, data, *fv.Data)
		}
	} else if err := json.Unmarshal(payload, target); err != nil {
		t.Fatalf("%s: %v", fv.Name, err)
	}
	again, _ := json.Marshal(target)
	var got, want map[string]interface{}
	_ = json.Unmarshal(again, &got)
	_ = json.Unmarshal(fv.Body, &want)
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Fatalf("%s: field %q is %v in the helper, %v in the vector", fv.Name, k, got[k], w)
		}
	}
}

// The helper's writer (the one path every reply takes) sends each helper-to-controller vector
// byte for byte, its JSON bodies marshalled from the helper's own types.
func TestFrameVectorsEncode(t *testing.T) {
	v := loadVectors(t)
	for _, fv := range v.Frames {
		if fv.Direction != "helper-to-controller" {
			continue
		}
		want := append(mustHex(t, fv.Header), fv.Payload.bytes(t)...)
		payload := fv.Payload.bytes(t)
		if fv.Schema != "" {
			body := schemaValue(fv.Schema)
			if err := json.Unmarshal(fv.Body, body); err != nil {
				t.Fatalf("%s: %v", fv.Name, err)
			}
			val := reflect.ValueOf(body).Elem().Interface()
			if fv.Data != nil {
				payload = joinJSONData(val, mustHex(t, *fv.Data))
			} else {
				payload, _ = json.Marshal(val)
			}
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		wr := newWriterTo(w)
		go wr.send(v.Types[fv.Type], fv.ID, payload)
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("%s: %v", fv.Name, err)
		}
		if !bytes.Equal(got, want) {
			n := len(got)
			if n > 64 {
				n = 64
			}
			t.Fatalf("%s: helper wrote %x..., want %x...", fv.Name, got[:n], want[:n])
		}
		_ = r.Close()
		_ = w.Close()
	}
}

func TestFrameVectorsRejected(t *testing.T) {
	v := loadVectors(t)
	for _, bad := range v.RejectedFrames {
		// The header alone must be refused: no allocation of the claimed length, no wait for it.
		_, err := readFrame(bufio.NewReader(bytes.NewReader(mustHex(t, bad.Hex))))
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			t.Fatalf("%s: readFrame gave %v, want a length error", bad.Name, err)
		}
	}
	for _, bad := range v.RejectedJSONData {
		var into map[string]interface{}
		if _, err := splitJSONData(mustHex(t, bad.Hex), &into); err == nil {
			t.Fatalf("%s: splitJSONData accepted it", bad.Name)
		}
	}
	for _, part := range v.Incomplete {
		_, err := readFrame(bufio.NewReader(bytes.NewReader(mustHex(t, part.Hex))))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%s: readFrame gave %v, want io.ErrUnexpectedEOF", part.Name, err)
		}
	}
}
