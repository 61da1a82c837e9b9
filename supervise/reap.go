package supervise

import (
	"errors"
	"syscall"
)

// waitResult is one wait status of the main child: a stop (job control)
// or its end; err when its status could not be read.
type waitResult struct {
	status  syscall.WaitStatus
	stopped bool
	err     error
}

// reapOne waits for the main child alone: its stops, then its end.
func reapOne(pid int, out chan<- waitResult) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// Only when something else in this process reaped it.
			out <- waitResult{err: err}
			return
		}
		if ws.Stopped() {
			out <- waitResult{status: ws, stopped: true}
			continue
		}
		out <- waitResult{status: ws}
		return
	}
}

// reapAll is the subreaper's single wait4(-1) loop: it hands the main
// child's statuses over and discards every other child's, so orphans leave
// no zombie and the main child's status is never lost. It runs until
// lcwrap has no child left.
func reapAll(pid int, out chan<- waitResult) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if got != pid {
			continue
		}
		out <- waitResult{status: ws, stopped: ws.Stopped()}
	}
}
