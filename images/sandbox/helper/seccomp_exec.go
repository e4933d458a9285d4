// `warden-helper --seccomp-exec PROGRAM [ARG]...` (version 8): installs the seccomp filter every
// channel command runs under (seccomp.go, without the Kubernetes channel's allocation part) on
// itself and then executes PROGRAM (looked up in PATH) with the ARGs and its own environment, so
// the program and everything it starts keep the filter. The docker-exec path of the controller
// (src/sandbox/docker-exec/exec.ts) runs each command through it: a process that docker exec
// starts is not a child of the helper, so it would otherwise run outside the filter (runc's
// default profile refuses user namespaces, but nothing refuses a set-user-ID mode). Fails closed:
// without the filter, nothing runs (exit 126 and a message on stderr).
package main

import (
	"os"
	"os/exec"
	"syscall"
)

// seccompExecArg is the argument that selects runSeccompExec.
const seccompExecArg = "--seccomp-exec"

// runSeccompExec installs the filter and replaces the process with args[0]; it returns never.
// Exit status 126 when no program is named, the filter cannot be installed, or the program cannot
// be found or executed (the shell's status for a command that cannot run).
func runSeccompExec(args []string) {
	if len(args) == 0 {
		logf("%s: no program to run", seccompExecArg)
		os.Exit(126)
	}
	if err := installSeccompFilter(false); err != nil {
		logf("%s: seccomp filter: %v; not running %s", seccompExecArg, err, args[0])
		os.Exit(126)
	}
	path, err := exec.LookPath(args[0])
	if err == nil {
		err = syscall.Exec(path, args, os.Environ())
	}
	logf("%s: %s: %v", seccompExecArg, args[0], err)
	os.Exit(126)
}
