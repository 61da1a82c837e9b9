package cancel

import (
	"errors"
	"fmt"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/reconcile"
)

// Source is the source of the events `lcwrap cancel` records. Each
// Recorder has a sourceEpoch of its own.
const Source = "lcwrap-cancel"

// The refusals of CheckAuthority, each wrapped in an *AuthorityError.
var (
	// ErrUnknownChild: no event in the journal names the child.
	ErrUnknownChild = errors.New("no such child in the journal")
	// ErrNoAuthority: lcwrap cannot cancel the child from here: its cancel
	// capability is not known (an adopted or external child), or its
	// wrapper cannot be verified on this host.
	ErrNoAuthority = errors.New("no cancel authority")
	// ErrEnded: the child already reached a terminal state.
	ErrEnded = errors.New("the child has already ended")
	// ErrNotStarted: the child is still created; its wrapper may not
	// handle a cancel request yet.
	ErrNotStarted = errors.New("the child has not started yet")
	// ErrWrapperGone: the recorded wrapper is provably gone (no such pid,
	// another process at that pid, an exited one, a reboot).
	ErrWrapperGone = errors.New("its wrapper is gone")
)

// AuthorityError says why cancelling a child was refused.
type AuthorityError struct {
	ChildID string
	// State is the child's projected state ("" when unknown).
	State event.State
	// Reason says what was found, in words fit for one line.
	Reason string
	// Err is one of ErrUnknownChild, ErrNoAuthority, ErrEnded,
	// ErrNotStarted, ErrWrapperGone.
	Err error
}

func (e *AuthorityError) Error() string { return e.ChildID + ": " + e.Reason }

// Unwrap returns the sentinel.
func (e *AuthorityError) Unwrap() error { return e.Err }

// Authority is verified authority to cancel one launched child: its
// wrapper, the lcwrap process that started it and is its lifecycle
// source, was found alive on this host with the recorded pid and start
// time. It is a statement about one moment: the wrapper must be verified
// again when it is signalled.
type Authority struct {
	projection.Target
	State   event.State
	Wrapper event.Identity
}

// CheckAuthority decides, from what t has read (call Refresh first) and
// the process table, whether lcwrap may cancel childID from here. It
// fails closed, in this order:
//
//   - ErrUnknownChild: no event names the child;
//   - ErrNoAuthority: its cancel capability is not known, or it is
//     external (adopted): lcwrap only observes it;
//   - ErrEnded: it already ended (State says how);
//   - ErrNoAuthority: no wrapper identity was recorded, the wrapper ran
//     on another host (or its host is not recorded), no start time was
//     recorded, or the process table cannot tell (unknown);
//   - ErrWrapperGone: the wrapper is provably gone;
//   - ErrNotStarted: the child is still created: until its starting
//     event, its wrapper may not handle SIGTERM yet.
//
// Every refusal is an *AuthorityError. Otherwise it returns the Authority
// and nil.
func CheckAuthority(t *projection.Tracker, childID string, table event.ProcTable) (Authority, error) {
	c, found := t.Lookup(childID)
	a := Authority{Target: c.Target, State: c.State}
	wrapper := c.Wrapper
	refuse := func(err error, format string, args ...any) (Authority, error) {
		return Authority{}, &AuthorityError{ChildID: childID, State: a.State, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	switch {
	case !found:
		return refuse(ErrUnknownChild, "no event in the journal names this child")
	case a.Lineage.External:
		return refuse(ErrNoAuthority, "it is an adopted (external) child: lcwrap only observes it and has no authority to cancel it (cancel capability %s)", a.Capabilities.Cancel)
	case a.Capabilities.Cancel != event.Known:
		return refuse(ErrNoAuthority, "its cancel capability is %s: lcwrap has no authority to cancel it", a.Capabilities.Cancel)
	case a.State.Terminal():
		return refuse(ErrEnded, "it has already ended: %s", a.State)
	case wrapper == nil:
		return refuse(ErrNoAuthority, "no wrapper identity was recorded for it, so none can be verified")
	case wrapper.Host == "":
		return refuse(ErrNoAuthority, "its wrapper's host was not recorded, so it cannot be verified from here")
	case wrapper.Host != event.Host():
		return refuse(ErrNoAuthority, "its wrapper runs on host %s, this is %s: no authority from here", wrapper.Host, event.Host())
	case wrapper.StartTime == 0:
		return refuse(ErrNoAuthority, "its wrapper's start time was not recorded, so a reused pid cannot be ruled out")
	}
	a.Wrapper = *wrapper
	switch v := event.CheckIdentity(table, a.Wrapper); v.Status {
	case event.Gone:
		return refuse(ErrWrapperGone, "its wrapper is gone (pid %d: %s)", a.Wrapper.PID, v.Reason)
	case event.ProcUnknown:
		return refuse(ErrNoAuthority, "its wrapper (pid %d) cannot be verified: %s", a.Wrapper.PID, v.Reason)
	}
	if a.State == event.StateCreated {
		return refuse(ErrNotStarted, "it has not started yet (state created): its wrapper may not accept a cancel request yet")
	}
	return a, nil
}

// Recorder records one cancel request in the journal, as events of
// Source with the child's lineage and capabilities.
type Recorder struct {
	w *reconcile.Writer
	a Authority
}

// NewRecorder records into the journal t tracks, appending with opts, at
// the times now returns.
func NewRecorder(t *projection.Tracker, opts journal.Options, now func() time.Time, a Authority) *Recorder {
	return &Recorder{w: reconcile.NewWriter(t, opts, now, Source), a: a}
}

// Requested appends the diagnostic event that records the request
// (docs/events.md): the reason when given (redacted on the way), who asked, the
// wrapper verified and the signal about to be sent. Outcomes: nil once it
// is in the journal; a *journal.BlockedError or another open or append
// error (then nothing may be sent).
func (r *Recorder) Requested(reason string, by event.Identity, signal string) error {
	d := event.CancelRequested{Request: "cancel", RequestedBy: by, Wrapper: r.a.Wrapper, Signal: signal, Reason: reason}
	return r.w.Append([]reconcile.Pending{{Target: r.a.Target, Spec: emit.Spec{Kind: event.KindDiagnostic, Details: d}}})
}

// Close releases the journal the recorder appended to.
func (r *Recorder) Close() error { return r.w.Close() }

// NotDelivered appends the diagnostic event that says the recorded request
// did not reach the wrapper, and why. Outcomes: those of Requested.
func (r *Recorder) NotDelivered(why error) error {
	return r.w.Append([]reconcile.Pending{{Target: r.a.Target, Spec: emit.Spec{Kind: event.KindDiagnostic, Details: event.CancelNotDelivered{
		Request: "cancel",
		Error:   why.Error(),
	}}}})
}
