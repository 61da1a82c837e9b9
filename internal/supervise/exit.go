package supervise

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/jsonl"
)

// Exit codes lcwrap uses for its own outcomes (the child's code passes
// through otherwise).
const (
	ExitTimeout       = 124 // the child ended after --timeout (or --ready-timeout) fired
	ExitNotExecutable = 126 // found but could not be executed
	ExitNotFound      = 127 // no such command
	ExitUnknown       = 125 // the child's exit status could not be read
)

// Who made a cancel request (details.cancel.by).
const (
	bySignal       = jsonl.CancelBySignal
	byTimeout      = jsonl.CancelByTimeout
	byReadyTimeout = jsonl.CancelByReadyTimeout
	byContext      = jsonl.CancelByContext
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

func (e exitStatus) details() *jsonl.Exit {
	if e.unknown != nil {
		return &jsonl.Exit{Status: "unknown", Error: e.unknown.Error()}
	}
	if e.signaled {
		return &jsonl.Exit{Signal: signalName(e.signal), SignalNumber: int(e.signal), CoreDumped: e.core}
	}
	return jsonl.ExitCode(e.code)
}

// cancelRequest is the first cancel request lcwrap delivered.
type cancelRequest struct {
	signal syscall.Signal
	by     string
	at     time.Time
}

func (c *cancelRequest) details() *jsonl.Cancel {
	return &jsonl.Cancel{Signal: signalName(c.signal), By: c.by, At: emit.Timestamp(c.at)}
}

// outcome is the exit translation table (docs/run.md, "Exit codes"): the terminal state
// and lcwrap's own exit code for a child that ran.
func outcome(e exitStatus, cancel *cancelRequest, success []int) (jsonl.State, int) {
	switch {
	case e.unknown != nil:
		return jsonl.StateLost, ExitUnknown
	case cancel != nil && (cancel.by == byTimeout || cancel.by == byReadyTimeout):
		return jsonl.StateCancelled, ExitTimeout
	case cancel != nil:
		return jsonl.StateCancelled, e.shellCode()
	case e.signaled:
		return jsonl.StateFailed, e.shellCode()
	case slices.Contains(success, e.code):
		return jsonl.StateCompleted, e.code
	}
	return jsonl.StateFailed, e.code
}

// signalName is "SIGTERM" for 15; signals without a name (real-time ones)
// are "SIG" and their number.
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}
