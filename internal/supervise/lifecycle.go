package supervise

import (
	"fmt"
	"slices"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/jsonl"
)

// launchedEdges narrows the contract's table (jsonl.Transition) to the
// edges lcwrap itself takes for a child it launched. The empty state is
// "no event yet". It never writes created → cancelled or lost (a child
// that never started failed to start) nor starting → waiting (waiting
// comes only from a running child's LCWRAP_STATE).
var launchedEdges = map[jsonl.State][]jsonl.State{
	"":                  {jsonl.StateCreated},
	jsonl.StateCreated:  {jsonl.StateStarting, jsonl.StateFailed},
	jsonl.StateStarting: {jsonl.StateRunning, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
	jsonl.StateRunning:  {jsonl.StateWaiting, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
	jsonl.StateWaiting:  {jsonl.StateRunning, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
}

// transition checks one edge lcwrap is about to write: outcomes nil, or a
// *jsonl.TransitionError (a bug in the caller; no event is written).
func transition(from, to jsonl.State) error {
	if !slices.Contains(launchedEdges[from], to) {
		return &jsonl.TransitionError{From: from, To: to}
	}
	return nil
}

// recorder is the one place lifecycle events are made. It is owned by the
// supervisor's goroutine.
type recorder struct {
	child *emit.Child
	state jsonl.State
	err   error // the first event that could not be made
}

// to records a transition: created is a created event, a terminal state a
// terminal event, anything else a state_changed event.
func (r *recorder) to(s jsonl.State, details jsonl.Details) {
	if err := transition(r.state, s); err != nil {
		r.fail(fmt.Errorf("supervise: %w", err))
		return
	}
	kind := jsonl.KindStateChanged
	switch {
	case s == jsonl.StateCreated:
		kind = jsonl.KindCreated
	case s.Terminal():
		kind = jsonl.KindTerminal
	}
	if r.emit(emit.Spec{Kind: kind, State: s, Details: details}) {
		r.state = s
	}
}

func (r *recorder) heartbeat() { r.emit(emit.Spec{Kind: jsonl.KindHeartbeat}) }

// childHeartbeat records liveness evidence the child gave itself.
func (r *recorder) childHeartbeat(from jsonl.NotifyOrigin) {
	r.emit(emit.Spec{Kind: jsonl.KindHeartbeat, Details: from})
}

// activity records what the child is doing.
func (r *recorder) activity(text string, details jsonl.Activity) {
	r.emit(emit.Spec{Kind: jsonl.KindActivity, Activity: text, Details: details})
}

func (r *recorder) diagnostic(details jsonl.Details) {
	r.emit(emit.Spec{Kind: jsonl.KindDiagnostic, Details: details})
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
