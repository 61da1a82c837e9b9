package supervise

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
)

// Exit codes lcwrap uses for its own outcomes (the child's code passes
// through otherwise); the one table is internal/exitcode.
const (
	ExitTimeout       = exitcode.Timeout       // the child ended after --timeout (or --ready-timeout) fired
	ExitNotExecutable = exitcode.NotExecutable // found but could not be executed
	ExitNotFound      = exitcode.NotFound      // no such command
	ExitUnknown       = exitcode.EndUnknown    // the child's exit status could not be read: its end is unknown (lost)
)

// Who made a cancel request (details.cancel.by).
const (
	bySignal       = event.CancelBySignal
	byTimeout      = event.CancelByTimeout
	byReadyTimeout = event.CancelByReadyTimeout
	byContext      = event.CancelByContext
)

// exitStatus is how the main child ended.
type exitStatus struct {
	unknown  error // its status could not be read
	signaled bool
	code     int            // when !signaled
	signal   syscall.Signal // when signaled
	core     bool
}

func decodeStatus(ws syscall.WaitStatus) exitStatus {
	if ws.Signaled() {
		return exitStatus{signaled: true, signal: ws.Signal(), core: ws.CoreDump()}
	}
	return exitStatus{code: ws.ExitStatus()}
}

// shellCode is the code a shell would report: the exit code, or 128+n for
// a death by signal n.
func (e exitStatus) shellCode() int {
	if e.signaled {
		return 128 + int(e.signal)
	}
	return e.code
}

func (e exitStatus) details() *event.Exit {
	if e.unknown != nil {
		return &event.Exit{Status: "unknown", Error: e.unknown.Error()}
	}
	if e.signaled {
		return &event.Exit{Signal: signalName(e.signal), SignalNumber: int(e.signal), CoreDumped: e.core}
	}
	return event.ExitCode(e.code)
}

// cancelRequest is the first cancel request lcwrap delivered.
type cancelRequest struct {
	signal syscall.Signal
	by     string
	at     time.Time
}

func (c *cancelRequest) details() *event.Cancel {
	return &event.Cancel{Signal: signalName(c.signal), By: c.by, At: event.Timestamp(c.at)}
}

// outcome is the exit translation table (docs/run.md, "Exit codes"): the terminal state
// and lcwrap's own exit code for a child that ran.
func outcome(e exitStatus, cancel *cancelRequest, success []int) (event.State, int) {
	switch {
	case e.unknown != nil:
		return event.StateLost, ExitUnknown
	case cancel != nil && (cancel.by == byTimeout || cancel.by == byReadyTimeout):
		return event.StateCancelled, ExitTimeout
	case cancel != nil:
		return event.StateCancelled, e.shellCode()
	case e.signaled:
		return event.StateFailed, e.shellCode()
	case slices.Contains(success, e.code):
		return event.StateCompleted, e.code
	}
	return event.StateFailed, e.code
}

// signalName is "SIGTERM" for 15; signals without a name (real-time ones)
// are "SIG" and their number.
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}
