package supervise

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/jsonl"
)

// Exit codes lcwrap uses for its own outcomes (the child's code passes
// through otherwise).
const (
	ExitTimeout       = 124 // the child ended after --timeout (or --ready-timeout) fired
	ExitNotExecutable = 126 // found but could not be executed
	ExitNotFound      = 127 // no such command
	ExitUnknown       = 125 // the child's exit status could not be read
)

// claim is stated by every terminal event: what lcwrap saw is a process
// exit status, nothing more.
const claim = "process-exit-status-only"

// Who made a cancel request (details.cancel.by).
const (
	bySignal       = "signal"
	byTimeout      = "timeout"
	byReadyTimeout = "ready-timeout"
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

func (e exitStatus) details() map[string]any {
	if e.unknown != nil {
		return map[string]any{"status": "unknown", "error": e.unknown.Error()}
	}
	if e.signaled {
		return map[string]any{"signal": signalName(e.signal), "signalNumber": int(e.signal), "coreDumped": e.core}
	}
	return map[string]any{"code": e.code}
}

// cancelRequest is the first cancel request lcwrap delivered.
type cancelRequest struct {
	signal syscall.Signal
	by     string
	at     time.Time
}

func (c *cancelRequest) details() map[string]any {
	return map[string]any{"signal": signalName(c.signal), "by": c.by, "at": emit.Timestamp(c.at)}
}

// outcome is the exit translation table of DESIGN.md: the terminal state
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
