// Process trees read from /proc, for the code that kills processes in rounds (the stray sweep,
// sweep.go; the Docker reset, init.go; the Kubernetes channel's takeOver and stopAll, channel.go;
// the keep frame, spawn.go; a shim's end, proc_run.go) and for what each of them spares: the trees
// of background processes' shims (`warden-helper --proc-run`, proc_run.go). A shim is a child
// subreaper, so every process its command starts, however it forks or setsid()s, stays below it:
// a process belongs to a shim's tree when its parent chain reaches the shim. Every function
// takes the /proc root, so tests run them over a fake snapshot.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procRunArg starts a background process's shim (proc_run.go); its command line is exactly
// shimArgv, whatever the helper binary's path.
const procRunArg = "--proc-run"

// shimArgv is the argv a shim runs with.
var shimArgv = []string{"warden-helper", procRunArg}

// procEntry is what a round needs of one process: its parent, and its start time (clock ticks
// since boot, the 22nd field of /proc/<pid>/stat), which tells a process from a later one that
// reuses its pid.
type procEntry struct {
	ppid  int
	start uint64
}

// readProcs maps every live, non-zombie process under procRoot ("/proc") to its entry.
func readProcs(procRoot string) map[int]procEntry {
	out := map[int]procEntry{}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, entry, ok := procStat(procRoot, pid)
		if !ok || state == "Z" || state == "X" {
			continue
		}
		out[pid] = entry
	}
	return out
}

// procStat reads the state, parent pid and start time of procRoot/<pid>/stat ("pid (comm) S ppid
// ...": comm may hold spaces and parentheses, so fields are taken after the last ')'). A snapshot
// line too short to hold a start time gives start 0.
func procStat(procRoot string, pid int) (string, procEntry, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", procEntry{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", procEntry{}, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return "", procEntry{}, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", procEntry{}, false
	}
	e := procEntry{ppid: ppid}
	// Field 22 (starttime) is the 20th after the comm: state is field 3.
	if len(fields) > 19 {
		e.start, _ = strconv.ParseUint(fields[19], 10, 64)
	}
	return fields[0], e, true
}

// runsProcRun reports whether procRoot/<pid>'s command line is a shim's (shimArgv: argv[0]'s base
// name warden-helper, then --proc-run, nothing else). Any process can claim it: what it earns is
// said where it is used (a shim's tree is spared only by start time, or until a keep frame).
func runsProcRun(procRoot string, pid int) bool {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return len(args) == 2 && filepath.Base(args[0]) == shimArgv[0] && args[1] == procRunArg
}

// procRunPids returns the processes of procs that run `--proc-run`.
func procRunPids(procRoot string, procs map[int]procEntry) map[int]bool {
	out := map[int]bool{}
	for pid := range procs {
		if runsProcRun(procRoot, pid) {
			out[pid] = true
		}
	}
	return out
}

// inTrees reports whether pid or one of its ancestors in procs is one of roots.
func inTrees(pid int, procs map[int]procEntry, roots map[int]bool) bool {
	if len(roots) == 0 {
		return false
	}
	for p, hops := pid, 0; hops < 4096; hops++ {
		if roots[p] {
			return true
		}
		e, ok := procs[p]
		if !ok || e.ppid == 0 || e.ppid == p {
			return false
		}
		p = e.ppid
	}
	return false
}

// treePids returns every process of procs in the trees of roots (the roots included).
func treePids(procs map[int]procEntry, roots map[int]bool) []int {
	var out []int
	for pid := range procs {
		if inTrees(pid, procs, roots) {
			out = append(out, pid)
		}
	}
	return out
}

// allButShimTrees returns every process of procs but PID 1, self and the trees of processes that
// run `--proc-run` (the Docker reset, the Kubernetes channel's takeOver).
func allButShimTrees(procRoot string, self int, procs map[int]procEntry) []int {
	shims := procRunPids(procRoot, procs)
	var out []int
	for pid := range procs {
		if pid != 1 && pid != self && !inTrees(pid, procs, shims) {
			out = append(out, pid)
		}
	}
	return out
}

// killRounds SIGKILLs (through kill) the processes that pick selects from a fresh snapshot of
// procRoot, round after round (a forking process may create new ones while it is being killed),
// until a round selects none or `rounds` rounds have run, `pause` apart. Returns how many the last
// round still selected: 0 when none was left.
func killRounds(procRoot string, kill func(pid int), pick func(map[int]procEntry) []int, rounds int, pause time.Duration) int {
	left := 0
	for round := 0; round < rounds; round++ {
		targets := pick(readProcs(procRoot))
		left = len(targets)
		if left == 0 {
			return 0
		}
		for _, pid := range targets {
			kill(pid)
		}
		time.Sleep(pause)
	}
	return len(pick(readProcs(procRoot)))
}

// sigkill is killRounds' kill outside tests.
func sigkill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// stopThenKill kills the trees of roots (pid → start time: a pid that now has another start time
// is another process). Every member is first stopped (SIGSTOP: a stopped process cannot fork, so
// no new child can leave a tree when its parent dies), snapshot after snapshot until no new member
// appears (at most 100), then every stopped one is SIGKILLed (which ends a stopped process too).
func stopThenKill(procRoot string, signal func(pid int, sig syscall.Signal), roots map[int]uint64) {
	if len(roots) == 0 {
		return
	}
	stopped := map[int]bool{}
	for round := 0; round < 100; round++ {
		procs := readProcs(procRoot)
		present := map[int]bool{}
		for pid, start := range roots {
			if e, ok := procs[pid]; ok && e.start == start {
				present[pid] = true
			}
		}
		fresh := 0
		for _, pid := range treePids(procs, present) {
			if !stopped[pid] {
				signal(pid, syscall.SIGSTOP)
				stopped[pid] = true
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	for pid := range stopped {
		signal(pid, syscall.SIGKILL)
	}
}

// sendSignal is stopThenKill's signal outside tests.
func sendSignal(pid int, sig syscall.Signal) { _ = syscall.Kill(pid, sig) }
