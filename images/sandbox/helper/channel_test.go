package main

import (
	"testing"
	"time"
)

// When the channel's stream ends, stopAll kills every running command's process group at once:
// the command and its background children (the sweep of strays is off in tests: see exec.go).
func TestStopAllKillsRunningCommandGroups(t *testing.T) {
	h := newTestHelper(t)
	h.run(1, "sleep 30 & sleep 30; echo never")
	h.run(2, "sleep 30")
	time.Sleep(200 * time.Millisecond)
	started := time.Now()
	h.reg.stopAll()
	h.waitExits(t, 2)
	if waited := time.Since(started); waited > 5*time.Second {
		t.Fatalf("commands ended %s after stopAll", waited)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := uint32(1); id <= 2; id++ {
		if got := h.exits[id]; got.Code != 137 || got.Signal != 9 {
			t.Fatalf("command %d: got %+v, want code 137 signal 9", id, got)
		}
	}
	if h.stdout[1] != 0 {
		t.Fatalf("command 1 printed %d bytes after it was killed", h.stdout[1])
	}
}
