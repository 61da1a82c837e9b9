package projection

import "errors"

// State changes follow the contract's one table, event.Transition (and
// event.Reachable across a gap); a refused change is a
// *event.TransitionError.

var (
	// ErrConflict means two different records share one event identity;
	// the first one seen is kept.
	ErrConflict = errors.New("same event identity, different content")
	// ErrIncomplete means a snapshot does not declare complete coverage, so
	// it cannot prove anything absent or correct anything.
	ErrIncomplete = errors.New("snapshot is not complete")
)
