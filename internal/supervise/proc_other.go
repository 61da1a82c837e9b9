//go:build !linux

package supervise

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// inheritedIgnored returns the signals the Go runtime reports as ignored.
func inheritedIgnored() map[syscall.Signal]bool {
	out := map[syscall.Signal]bool{}
	for n := 1; n < 32; n++ {
		if signal.Ignored(syscall.Signal(n)) {
			out[syscall.Signal(n)] = true
		}
	}
	return out
}

func becomeSubreaper() error {
	return errors.New("child subreaper is only available on Linux")
}

// startProcess starts the child; the signal mask is passed on as it is.
func startProcess(path string, argv []string, attr *syscall.ProcAttr) (*process, error) {
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return &process{pid: pid, fd: -1}, nil
}

// signal sends sig to the child by pid: no pidfds here.
func (p *process) signal(sig syscall.Signal) error { return syscall.Kill(p.pid, sig) }

func (p *process) release() {}

type terminal struct{ fd, own int }

// openTerminal returns nil: no job control here.
func openTerminal() *terminal                    { return nil }
func (t *terminal) foreground() int              { return -1 }
func (t *terminal) setForeground(pgrp int) error { return nil }
func (t *terminal) close()                       {}
