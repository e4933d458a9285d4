// A small assembler for classic BPF (the seccomp filter of seccomp.go): instructions name their
// jump targets by label, and assemble turns the labels into the forward offsets the kernel wants.
package main

import (
	"fmt"
	"syscall"
)

// bpfIns is one instruction: a load, a return, or a conditional jump (jeq, jset) whose targets are
// labels ("" = the next instruction). label names this instruction as a target.
type bpfIns struct {
	label  string
	code   uint16
	k      uint32
	jt, jf string
}

// bpfLoad loads the 32-bit word at byte offset off of seccomp_data.
func bpfLoad(off uint32) bpfIns {
	return bpfIns{code: syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS, k: off}
}

// bpfJeq jumps to label jt when the accumulator equals k, else to jf.
func bpfJeq(k uint32, jt, jf string) bpfIns {
	return bpfIns{code: syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K, k: k, jt: jt, jf: jf}
}

// bpfJset jumps to label jt when the accumulator has any bit of k set, else to jf.
func bpfJset(k uint32, jt, jf string) bpfIns {
	return bpfIns{code: syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K, k: k, jt: jt, jf: jf}
}

// bpfRet returns k (a SECCOMP_RET_* action).
func bpfRet(k uint32) bpfIns {
	return bpfIns{code: syscall.BPF_RET | syscall.BPF_K, k: k}
}

// labeled names ins as the target label.
func labeled(label string, ins bpfIns) bpfIns {
	ins.label = label
	return ins
}

// assemble resolves the labels of prog. Errors: a label defined twice, a target that is not
// defined, lies backwards, or is more than 255 instructions ahead (classic BPF jumps forward only,
// by an 8-bit offset).
func assemble(prog []bpfIns) ([]syscall.SockFilter, error) {
	at := map[string]int{}
	for i, ins := range prog {
		if ins.label == "" {
			continue
		}
		if _, dup := at[ins.label]; dup {
			return nil, fmt.Errorf("bpf label %q defined twice", ins.label)
		}
		at[ins.label] = i
	}
	offset := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := at[label]
		if !ok {
			return 0, fmt.Errorf("bpf label %q is not defined", label)
		}
		d := to - from - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("bpf jump from %d to %q (%d) is out of range", from, label, to)
		}
		return uint8(d), nil
	}
	out := make([]syscall.SockFilter, len(prog))
	for i, ins := range prog {
		jt, err := offset(i, ins.jt)
		if err != nil {
			return nil, err
		}
		jf, err := offset(i, ins.jf)
		if err != nil {
			return nil, err
		}
		out[i] = syscall.SockFilter{Code: ins.code, K: ins.k, Jt: jt, Jf: jf}
	}
	return out, nil
}
