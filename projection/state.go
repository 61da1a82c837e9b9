package projection

import (
	"errors"
	"fmt"

	"github.com/lcwrap/lcwrap/jsonl"
)

var (
	// ErrIllegalTransition means an event asks for a state change the
	// contract's table does not allow.
	ErrIllegalTransition = errors.New("illegal transition")
	// ErrTerminalImmutable means an event or a snapshot would change a
	// child that already reached a terminal state.
	ErrTerminalImmutable = errors.New("terminal state is immutable")
	// ErrConflict means two different records share one event identity;
	// the first one seen is kept.
	ErrConflict = errors.New("same event identity, different content")
	// ErrIncomplete means a snapshot does not declare complete coverage, so
	// it cannot prove anything absent or correct anything.
	ErrIncomplete = errors.New("snapshot is not complete")
)

// edges is the contract's table of legal transitions: every state a child
// may move to from each non-terminal state. Terminal states have no
// entry: nothing leaves them.
var edges = map[jsonl.State][]jsonl.State{
	jsonl.StateCreated:  {jsonl.StateStarting, jsonl.StateCancelled, jsonl.StateFailed, jsonl.StateLost},
	jsonl.StateStarting: {jsonl.StateRunning, jsonl.StateWaiting, jsonl.StateCancelled, jsonl.StateFailed, jsonl.StateLost},
	jsonl.StateRunning:  {jsonl.StateWaiting, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
	jsonl.StateWaiting:  {jsonl.StateRunning, jsonl.StateCompleted, jsonl.StateFailed, jsonl.StateCancelled, jsonl.StateLost},
}

// reach[from][to] says whether to can be reached from from through one or
// more legal edges; it decides what an event after a gap in its sequence
// space may do, since the events in the gap may hold the steps between.
var reach = func() map[jsonl.State]map[jsonl.State]bool {
	r := map[jsonl.State]map[jsonl.State]bool{}
	for from := range edges {
		seen := map[jsonl.State]bool{}
		next := append([]jsonl.State(nil), edges[from]...)
		for len(next) > 0 {
			s := next[0]
			next = next[1:]
			if seen[s] {
				continue
			}
			seen[s] = true
			next = append(next, edges[s]...)
		}
		r[from] = seen
	}
	return r
}()

// TransitionError is a refused state change. It names both ends.
type TransitionError struct {
	From, To jsonl.State
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() {
		return fmt.Sprintf("%s → %s: %s is terminal and immutable", e.From, e.To, e.From)
	}
	return fmt.Sprintf("illegal transition %s → %s", e.From, e.To)
}

// Unwrap returns ErrTerminalImmutable when From is terminal, otherwise
// ErrIllegalTransition.
func (e *TransitionError) Unwrap() error {
	if e.From.Terminal() {
		return ErrTerminalImmutable
	}
	return ErrIllegalTransition
}

// Transition checks one step of the contract's table. Outcomes: nil when
// from → to is a legal edge; a *TransitionError wrapping
// ErrTerminalImmutable when from is terminal; a *TransitionError wrapping
// ErrIllegalTransition otherwise (a state never moves to itself, and
// nothing moves back to created).
func Transition(from, to jsonl.State) error {
	for _, s := range edges[from] {
		if s == to {
			return nil
		}
	}
	return &TransitionError{From: from, To: to}
}

// Reachable checks a move across a gap: to must be reachable from from
// through legal edges. Outcomes are those of Transition.
func Reachable(from, to jsonl.State) error {
	if reach[from][to] {
		return nil
	}
	return &TransitionError{From: from, To: to}
}
