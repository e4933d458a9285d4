// Command pause is the pod sandbox's first process for the local test cluster (scripts/ensure-k8s.sh):
// it holds the pod's namespaces open, reaps children it inherits, and exits 0 on SIGINT or SIGTERM.
// Written for warden so that the cluster needs no registry; behaviour modelled on Kubernetes' pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: warning: not running as PID 1\n")
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren collects every exited child without blocking, so that none stays a zombie.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
