package event

import (
	"errors"
	"fmt"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

var (
	// ErrIllegalTransition means a state change the contract's table does
	// not allow.
	ErrIllegalTransition = errors.New("illegal transition")
	// ErrTerminalImmutable means a change to a child that already reached
	// a terminal state.
	ErrTerminalImmutable = errors.New("terminal state is immutable")
)

// edges is the contract's table of legal transitions: every state a child
// may move to from each non-terminal state. Terminal states have none:
// nothing leaves them. A state never moves to itself, and nothing moves
// back to created. Producers take a subset of it (a launched child never
// goes from created to lost, say: see supervise), readers apply all of it.
// A switch rather than a map: package initialisation is on every
// process's start-up path.
func edges(from State) []State {
	switch from {
	case StateCreated:
		return []State{StateStarting, StateCancelled, StateFailed, StateLost}
	case StateStarting:
		return []State{StateRunning, StateWaiting, StateCancelled, StateFailed, StateLost}
	case StateRunning:
		return []State{StateWaiting, StateCompleted, StateFailed, StateCancelled, StateLost}
	case StateWaiting:
		return []State{StateRunning, StateCompleted, StateFailed, StateCancelled, StateLost}
	}
	return nil
}

// reach[from][to] says whether to can be reached from from through one or
// more legal edges: what an event after a gap in its sequence space may
// do, since the events in the gap may hold the steps between. It is
// built on first use.
var reach = lazy.Value[map[State]map[State]bool]{Make: func() map[State]map[State]bool {
	r := map[State]map[State]bool{}
	for _, from := range States {
		seen := map[State]bool{}
		next := edges(from)
		for len(next) > 0 {
			s := next[0]
			next = next[1:]
			if seen[s] {
				continue
			}
			seen[s] = true
			next = append(next, edges(s)...)
		}
		r[from] = seen
	}
	return r
}}

// TransitionError is a refused state change. It names both ends; From is
// "" when the child had no state yet.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() {
		return fmt.Sprintf("%s → %s: %s is terminal and immutable", e.From, e.To, e.From)
	}
	from := e.From
	if from == "" {
		from = "(none)"
	}
	return fmt.Sprintf("illegal transition %s → %s", from, e.To)
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
// ErrIllegalTransition otherwise.
func Transition(from, to State) error {
	for _, s := range edges(from) {
		if s == to {
			return nil
		}
	}
	return &TransitionError{From: from, To: to}
}

// Reachable checks a move across a gap: to must be reachable from from
// through legal edges. Outcomes are those of Transition.
func Reachable(from, to State) error {
	if reach.Get()[from][to] {
		return nil
	}
	return &TransitionError{From: from, To: to}
}

// Successors lists the states the contract's table lets s move to (none
// for a terminal state), in table order. The slice is the caller's.
func Successors(s State) []State { return edges(s) }
