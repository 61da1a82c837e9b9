package codex

// Kind says what an Observation proves.
type Kind int

// The kinds of observation, each mapped once (docs/agents-codex.md).
const (
	// Ignored: a shape lcwrap knows and deliberately maps to nothing
	// (Reason says which).
	Ignored Kind = iota
	// Unrecognized: a shape lcwrap does not know (Discriminator is its
	// type tag, never the payload). Counted, never a state.
	Unrecognized
	// Malformed: not a JSON object at all. Counted, never a state.
	Malformed
	// SessionStarted: codex says a session (thread) began: SessionID.
	SessionStarted
	// TurnStarted: codex says a turn began (a prompt was submitted).
	TurnStarted
	// Activity: a tool call or item started, changed or ended.
	Activity
	// Waiting: codex says it waits for the user (Waiting names for what).
	Waiting
	// TurnEnded: codex says the turn ended (Report holds what it said
	// about it: usage, or the error of a failed turn).
	TurnEnded
	// AgentError: codex reported an error (Report holds its message);
	// a diagnostic, never a state.
	AgentError
)

// Observation is one piece of codex's own evidence, normalized: what it
// proves and nothing more. Texts are raw here; the event writer redacts
// and cuts them.
type Observation struct {
	Kind Kind
	// SessionID is codex's thread id, where the payload carries one.
	SessionID string
	// Activity is a short description (tool and what it works on).
	Activity string
	// Waiting says what codex waits for (Kind Waiting).
	Waiting string
	// Report is what codex says about itself, recorded as its report.
	Report map[string]any
	// Reason is a static reason (Kind Ignored).
	Reason string
	// Discriminator is the unknown type tag (Kind Unrecognized).
	Discriminator string
	// Running is true when the observation proves codex is working (a
	// tool call or item), so that after a Waiting it is running again.
	Running bool
}
