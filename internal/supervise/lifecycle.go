package supervise

import (
	"fmt"
	"slices"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// launchedEdges narrows the contract's table (event.Transition) to the
// edges lcwrap itself takes for a child it launched. The empty state is
// "no event yet". It never writes created → cancelled or lost (a child
// that never started failed to start) nor starting → waiting (waiting
// comes only from a running child's LCWRAP_STATE). A switch rather than
// a map: package initialisation is on every process's start-up path.
func launchedEdges(from event.State) []event.State {
	switch from {
	case "":
		return []event.State{event.StateCreated}
	case event.StateCreated:
		return []event.State{event.StateStarting, event.StateFailed}
	case event.StateStarting:
		return []event.State{event.StateRunning, event.StateFailed, event.StateCancelled, event.StateLost}
	case event.StateRunning:
		return []event.State{event.StateWaiting, event.StateCompleted, event.StateFailed, event.StateCancelled, event.StateLost}
	case event.StateWaiting:
		return []event.State{event.StateRunning, event.StateCompleted, event.StateFailed, event.StateCancelled, event.StateLost}
	}
	return nil
}

// transition checks one edge lcwrap is about to write: outcomes nil, or a
// *event.TransitionError (a bug in the caller; no event is written).
func transition(from, to event.State) error {
	if !slices.Contains(launchedEdges(from), to) {
		return &event.TransitionError{From: from, To: to}
	}
	return nil
}

// recorder is the one place lifecycle events are made. It is owned by the
// supervisor's goroutine.
type recorder struct {
	child *emit.Child
	state event.State
	err   error // the first event that could not be made
}

// to records a transition: created is a created event, a terminal state a
// terminal event, anything else a state_changed event.
func (r *recorder) to(s event.State, details event.Details) {
	if err := transition(r.state, s); err != nil {
		r.fail(fmt.Errorf("supervise: %w", err))
		return
	}
	kind := event.KindStateChanged
	switch {
	case s == event.StateCreated:
		kind = event.KindCreated
	case s.Terminal():
		kind = event.KindTerminal
	}
	if r.emit(emit.Spec{Kind: kind, State: s, Details: details}) {
		r.state = s
	}
}

func (r *recorder) heartbeat() { r.emit(emit.Spec{Kind: event.KindHeartbeat}) }

// childHeartbeat records liveness evidence the child gave itself.
func (r *recorder) childHeartbeat(from event.NotifyOrigin) {
	r.emit(emit.Spec{Kind: event.KindHeartbeat, Details: from})
}

// activity records what the child is doing.
func (r *recorder) activity(text string, details ActivityDetails) {
	r.emit(emit.Spec{Kind: event.KindActivity, Activity: text, Details: details})
}

func (r *recorder) diagnostic(details event.Details) {
	r.emit(emit.Spec{Kind: event.KindDiagnostic, Details: details})
}

func (r *recorder) emit(s emit.Spec) bool {
	if r.child.Silent() {
		return true // nothing would see it: the state is all that is kept
	}
	_, err := r.child.Emit(s)
	r.fail(err)
	return err == nil
}

func (r *recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
