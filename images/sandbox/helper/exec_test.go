package main

import (
	"bufio"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testHelper is a registry whose frames go to a pipe that the test decodes.
type testHelper struct {
	reg    *registry
	mu     sync.Mutex
	stdout map[uint32]int
	stderr map[uint32]string
	exits  map[uint32]exitBody
	exited chan uint32
}

func newTestHelper(t *testing.T) *testHelper {
	return newSlowTestHelper(t, 0)
}

// newSlowTestHelper starts reading the frames only after `delay`: a controller that reads slowly.
func newSlowTestHelper(t *testing.T, delay time.Duration) *testHelper {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(newWriterTo(w))
	reg.sweep = nil // outside a sandbox the sweep would kill the user's other processes
	h := &testHelper{
		reg:    reg,
		stdout: map[uint32]int{},
		stderr: map[uint32]string{},
		exits:  map[uint32]exitBody{},
		exited: make(chan uint32, 1024),
	}
	go func() {
		time.Sleep(delay)
		in := bufio.NewReader(r)
		for {
			f, err := readFrame(in)
			if err != nil {
				return
			}
			h.mu.Lock()
			switch f.typ {
			case tStdout:
				h.stdout[f.id] += len(f.payload)
			case tStderr:
				h.stderr[f.id] += string(f.payload)
			case tExit:
				var body exitBody
				_ = json.Unmarshal(f.payload, &body)
				h.exits[f.id] = body
				h.exited <- f.id
			}
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *testHelper) run(id uint32, script string) {
	h.reg.start(id, execRequest{Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}})
}

// waitExits waits for n exit frames.
func (h *testHelper) waitExits(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-h.exited:
		case <-deadline:
			t.Fatalf("only %d of %d commands reported their exit", i, n)
		}
	}
}

func threadCount(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// 64 commands running at once cost the helper no thread each (os/exec's Wait blocked one per
// command, and each thread counts against pids.max).
func TestRunningCommandsCostNoHelperThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(helperProcs))
	reserveThreads(helperThreads)
	h := newTestHelper(t)
	before := threadCount(t)
	for id := uint32(1); id <= 64; id++ {
		h.run(id, "sleep 1")
	}
	time.Sleep(300 * time.Millisecond)
	during := threadCount(t)
	h.waitExits(t, 64)
	if during > before+4 {
		t.Fatalf("64 running commands grew the helper from %d to %d threads", before, during)
	}
	for id := uint32(1); id <= 64; id++ {
		if got := h.exits[id]; got.Code != 0 {
			t.Fatalf("command %d exited %d", id, got.Code)
		}
	}
}

// Exit statuses arrive whether a command exits before or after the reaper is told its pid.
func TestExitStatusesOfQuickAndSignalledCommands(t *testing.T) {
	h := newTestHelper(t)
	for id := uint32(1); id <= 50; id++ {
		h.run(id, "exit "+strconv.Itoa(int(id)))
	}
	h.run(51, "kill -TERM $$")
	h.waitExits(t, 51)
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := uint32(1); id <= 50; id++ {
		if got := h.exits[id]; got.Code != int(id) || got.Signal != 0 {
			t.Fatalf("command %d: got %+v, want code %d", id, got, id)
		}
	}
	if got := h.exits[51]; got.Code != 143 || got.Signal != 15 {
		t.Fatalf("TERMed command: got %+v, want code 143 signal 15", got)
	}
}

// Concurrent large outputs arrive whole, each under its own id.
func TestConcurrentLargeOutputsArriveWhole(t *testing.T) {
	h := newTestHelper(t)
	for id := uint32(1); id <= 16; id++ {
		h.run(id, "head -c 5000000 /dev/zero")
	}
	h.waitExits(t, 16)
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := uint32(1); id <= 16; id++ {
		if h.stdout[id] != 5000000 || h.exits[id].Code != 0 {
			t.Fatalf("command %d: %d bytes, exit %d; want 5000000 bytes, exit 0", id, h.stdout[id], h.exits[id].Code)
		}
	}
}

// Output still in the pipe when the command exits arrives whole, however long the controller
// takes to read it (before, the pipes were closed 2.5 s after the exit and the rest was lost).
func TestOutputLeftInThePipeOutlivesTheGrace(t *testing.T) {
	h := newSlowTestHelper(t, 4*time.Second)
	h.run(1, "head -c 2000000 /dev/zero")
	h.waitExits(t, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stdout[1] != 2000000 || h.exits[1].Code != 0 {
		t.Fatalf("%d bytes, exit %d; want 2000000 bytes, exit 0", h.stdout[1], h.exits[1].Code)
	}
}

// A process that left the group and keeps the pipe open does not hold the call forever.
func TestEscapedWriterDoesNotHoldTheCall(t *testing.T) {
	h := newTestHelper(t)
	h.run(1, "setsid sh -c 'sleep 4' & echo started")
	start := time.Now()
	h.waitExits(t, 1)
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the call took %v with an escaped process holding its pipe", took)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stdout[1] != len("started\n") || h.exits[1].Code != 0 {
		t.Fatalf("%d bytes, exit %d; want 8 bytes, exit 0", h.stdout[1], h.exits[1].Code)
	}
}

func TestNotRunnableMessages(t *testing.T) {
	eagain := &os.PathError{Op: "fork/exec", Path: "/bin/bash", Err: syscall.EAGAIN}
	msg := notRunnableMessage("bash", eagain)
	for _, want := range []string{"cannot start bash", "process limit is reached", "pids.max = ", "limits.pids"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("EAGAIN message %q lacks %q", msg, want)
		}
	}
	enoent := &os.PathError{Op: "fork/exec", Path: "/x", Err: syscall.ENOENT}
	if got := notRunnableMessage("x", enoent); got != "warden-helper: x: command not found\n" {
		t.Fatalf("ENOENT message %q", got)
	}
	e2big := &os.PathError{Op: "fork/exec", Path: "/bin/bash", Err: syscall.E2BIG}
	if got := notRunnableMessage("bash", e2big); got != "warden-helper: bash: argument list too long (one argument may have at most 131071 bytes)\n" {
		t.Fatalf("E2BIG message %q", got)
	}
}

func TestParsePidsEvents(t *testing.T) {
	cases := map[string]int64{"max 3\n": 3, "max 0": 0, "": -1, "other 1\n": -1}
	for in, want := range cases {
		if got := parsePidsEvents(in); got != want {
			t.Fatalf("parsePidsEvents(%q) = %d, want %d", in, got, want)
		}
	}
}

// reserveThreads leaves at least n threads in the process.
func TestReserveThreads(t *testing.T) {
	reserveThreads(24)
	if got := threadCount(t); got < 24 {
		t.Fatalf("%d threads after reserving 24", got)
	}
}

// A kill without graceMs gives a command that ignores TERM defaultKillGrace (500 ms, the grace the
// controller sends, src/sandbox/io-contract.ts KILL_GRACE_MS) before KILL: not less, and not the
// 1000 ms this default used to be.
func TestKillWithoutGraceKillsAfterTheDefault(t *testing.T) {
	h := newTestHelper(t)
	h.run(1, "trap '' TERM; echo ready; sleep 5")
	for ready := false; !ready; time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		ready = h.stdout[1] > 0
		h.mu.Unlock()
	}
	started := time.Now()
	h.reg.kill(1, killRequest{})
	h.waitExits(t, 1)
	elapsed := time.Since(started)
	h.mu.Lock()
	code := h.exits[1].Code
	h.mu.Unlock()
	if code != 137 {
		t.Fatalf("exit status %d, want 137 (KILL)", code)
	}
	if elapsed < 450*time.Millisecond || elapsed >= time.Second {
		t.Fatalf("KILL came %v after TERM, want about 500ms", elapsed)
	}
}
