package main

// Who is spared (sweep.go, proctree.go, spawn.go's keep), over a fake /proc: nothing here
// signals a real process.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
)

type fakeProcess struct {
	ppid    int
	start   uint64
	cmdline string // arguments separated by spaces
	state   string // "S" unless set
}

// writeFakeProc writes procRoot/<pid>/{stat,cmdline} in the kernel's formats (stat's 52 fields).
func writeFakeProc(t *testing.T, procs map[int]fakeProcess) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		state := p.state
		if state == "" {
			state = "S"
		}
		// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
		// stime cutime cstime priority nice threads itrealvalue starttime ...
		stat := fmt.Sprintf("%d (a (b) c) %s %d 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 10%s\n",
			pid, state, p.ppid, p.start, strings.Repeat(" 0", 30))
		cmdline := strings.ReplaceAll(p.cmdline, " ", "\x00") + "\x00"
		_ = os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "cmdline"), []byte(cmdline), 0o644)
	}
	_ = os.WriteFile(filepath.Join(root, "self"), nil, 0o644) // not a pid: skipped
	return root
}

// sandbox is a Docker sandbox after a while: PID 1, the helper (10), a shim it spawned (20) with
// its command and a grandchild, a stray daemon (30), a process that claims to be a shim (40,
// with a child), a docker exec process with a child (50, 51), a shim of an earlier helper
// re-parented to PID 1 (60, with its command), a zombie (70) and a sealed-path shim (80).
var sandbox = map[int]fakeProcess{
	1:  {ppid: 0, start: 1, cmdline: "/usr/local/libexec/warden/warden-helper"},
	10: {ppid: 1, start: 100, cmdline: "/usr/local/libexec/warden/warden-helper --serve"},
	20: {ppid: 10, start: 500, cmdline: "warden-helper --proc-run"},
	21: {ppid: 20, start: 501, cmdline: "sh -c npm run dev"},
	22: {ppid: 21, start: 502, cmdline: "node server.js"},
	30: {ppid: 1, start: 300, cmdline: "sleep 1000"},
	40: {ppid: 1, start: 600, cmdline: "/tmp/warden-helper --proc-run"},
	41: {ppid: 40, start: 601, cmdline: "sleep 1000"},
	50: {ppid: 0, start: 50, cmdline: "sh"},
	51: {ppid: 50, start: 51, cmdline: "sleep 5"},
	60: {ppid: 1, start: 700, cmdline: "warden-helper --proc-run"},
	61: {ppid: 60, start: 701, cmdline: "python3 -m http.server"},
	70: {ppid: 1, start: 800, cmdline: "", state: "Z"},
	80: {ppid: 1, start: 900, cmdline: "warden-helper --proc-run --extra"},
}

func sorted(pids []int) []int {
	sort.Ints(pids)
	return pids
}

func TestProcStatAndShimCommandLines(t *testing.T) {
	root := writeFakeProc(t, sandbox)
	procs := readProcs(root)
	if _, zombie := procs[70]; zombie || len(procs) != len(sandbox)-1 {
		t.Fatalf("readProcs has %d processes (zombie listed: %v)", len(procs), zombie)
	}
	if procs[21] != (procEntry{ppid: 20, start: 501}) {
		t.Fatalf("process 21: %+v", procs[21])
	}
	got := []int{}
	for pid := range procRunPids(root, procs) {
		got = append(got, pid)
	}
	if want := []int{20, 40, 60}; !reflect.DeepEqual(sorted(got), want) {
		t.Fatalf("--proc-run processes %v, want %v (80 has an extra argument)", got, want)
	}
}

// The stray sweep spares the keep set's trees (by pid and start time), not a process that claims
// to be a shim; with any, every shim's tree (the Kubernetes channel's last sweep).
func TestSweepSparesTheKeepSet(t *testing.T) {
	root := writeFakeProc(t, sandbox)
	procs := readProcs(root)
	cases := []struct {
		name  string
		spare shimSpare
		want  []int
	}{
		{"nothing kept", shimSpare{}, []int{20, 21, 22, 30, 40, 41, 60, 61, 80}},
		{"the keep set", shimSpare{keep: map[int]uint64{20: 500, 60: 700}}, []int{30, 40, 41, 80}},
		{"a pid with another start time", shimSpare{keep: map[int]uint64{20: 499, 60: 700}}, []int{20, 21, 22, 30, 40, 41, 80}},
		{"any shim", shimSpare{any: true}, []int{30, 80}},
	}
	for _, c := range cases {
		if got := sorted(strays(10, procs, c.spare.roots(root, procs))); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: strays %v, want %v", c.name, got, c.want)
		}
	}
}

// The Docker reset (self = PID 1) and the Kubernetes takeover (self = the new channel) kill all
// but PID 1, themselves and every shim's tree, docker exec processes included.
func TestResetAndTakeOverSpareEveryShimTree(t *testing.T) {
	root := writeFakeProc(t, sandbox)
	procs := readProcs(root)
	if got, want := sorted(allButShimTrees(root, 1, procs)), []int{10, 30, 50, 51, 80}; !reflect.DeepEqual(got, want) {
		t.Errorf("reset kills %v, want %v", got, want)
	}
	if got, want := sorted(allButShimTrees(root, 50, procs)), []int{10, 30, 51, 80}; !reflect.DeepEqual(got, want) {
		t.Errorf("takeover by 50 kills %v, want %v", got, want)
	}
	var killed []int
	left := killRounds(root, func(pid int) { killed = append(killed, pid) }, func(p map[int]procEntry) []int {
		return allButShimTrees(root, 1, p)
	}, 3, 0)
	if left != 5 || len(killed) != 15 {
		t.Fatalf("3 rounds over a snapshot that never changes: %d left, %d kills", left, len(killed))
	}
}

// A keep frame keeps the listed shims that are alive with that start time and run --proc-run; it
// stops, then kills, every other shim's tree, and leaves everything else alone.
func TestKeepKillsTheUnverifiedShims(t *testing.T) {
	root := writeFakeProc(t, sandbox)
	reg := newRegistry(nil)
	reg.sweep = nil
	reg.procRoot = root
	var signals []string
	reg.signalPid = func(pid int, sig syscall.Signal) {
		signals = append(signals, fmt.Sprintf("%s %d", map[syscall.Signal]string{syscall.SIGSTOP: "STOP", syscall.SIGKILL: "KILL"}[sig], pid))
	}
	reg.keep = map[int]uint64{99: 1}
	res := reg.keepShims(keepRequest{Shims: []shimRef{{Pid: 20, StartTime: 500}, {Pid: 60, StartTime: 1}, {Pid: 30, StartTime: 300}, {Pid: 20, StartTime: 500}}})
	if !reflect.DeepEqual(res.Kept, []int{20}) || res.Killed != 2 {
		t.Fatalf("keep answered %+v, want kept [20] killed 2 (40 claims, 60's start time differs)", res)
	}
	if !reflect.DeepEqual(reg.keep, map[int]uint64{20: 500}) {
		t.Fatalf("keep set %v", reg.keep)
	}
	// Every member is stopped before any is killed.
	if len(signals) != 8 {
		t.Fatalf("signals %v, want 4 STOPs then 4 KILLs", signals)
	}
	stops, kills := append([]string{}, signals[:4]...), append([]string{}, signals[4:]...)
	sort.Strings(stops)
	sort.Strings(kills)
	want := []string{"STOP 40", "STOP 41", "STOP 60", "STOP 61", "KILL 40", "KILL 41", "KILL 60", "KILL 61"}
	if got := append(stops, kills...); !reflect.DeepEqual(got, want) {
		t.Fatalf("signals %v, want %v", signals, want)
	}
}

// A shim whose spawn is in flight is kept by a keep frame that cannot list it yet.
func TestKeepSparesSpawnsInFlight(t *testing.T) {
	root := writeFakeProc(t, sandbox)
	reg := newRegistry(nil)
	reg.sweep = nil
	reg.procRoot = root
	var killed []int
	reg.signalPid = func(pid int, sig syscall.Signal) {
		if sig == syscall.SIGKILL {
			killed = append(killed, pid)
		}
	}
	reg.spawning[60] = 700
	res := reg.keepShims(keepRequest{})
	if len(res.Kept) != 0 || res.Killed != 2 || !reflect.DeepEqual(sorted(killed), []int{20, 21, 22, 40, 41}) {
		t.Fatalf("keep answered %+v and killed %v; want 20's and 40's trees killed, 60 spared", res, killed)
	}
}
