package supervise

import (
	"fmt"
	"slices"

	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/jsonl"
)

// edges is a launched child's lifecycle: every legal transition, and no
// other. The empty state is "no event yet".
var edges = map[jsonl.State][]jsonl.State{
	"":                  {jsonl.StateCreated},
	jsonl.StateCreated:  {jsonl.StateStarting, jsonl.StateFailed},
	jsonl.StateStarting: {jsonl.StateRunning, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
	jsonl.StateRunning:  {jsonl.StateWaiting, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
	jsonl.StateWaiting:  {jsonl.StateRunning, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
}

// TransitionError is an illegal lifecycle edge: a bug in the caller. No
// event is written for it.
type TransitionError struct {
	From, To jsonl.State
}

func (e *TransitionError) Error() string {
	from := e.From
	if from == "" {
		from = "(none)"
	}
	return fmt.Sprintf("supervise: illegal transition %s → %s", from, e.To)
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
func (r *recorder) to(s jsonl.State, details map[string]any) {
	if !slices.Contains(edges[r.state], s) {
		r.fail(&TransitionError{From: r.state, To: s})
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
func (r *recorder) childHeartbeat(details map[string]any) {
	r.emit(emit.Spec{Kind: jsonl.KindHeartbeat, Details: details})
}

// activity records what the child is doing (details may be nil).
func (r *recorder) activity(text string, details map[string]any) {
	r.emit(emit.Spec{Kind: jsonl.KindActivity, Activity: text, Details: details})
}

func (r *recorder) diagnostic(details map[string]any) {
	r.emit(emit.Spec{Kind: jsonl.KindDiagnostic, Details: details})
}

func (r *recorder) emit(s emit.Spec) bool {
	_, err := r.child.Emit(s)
	r.fail(err)
	return err == nil
}

func (r *recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
