package event

import (
	"bytes"
	"encoding/json"
)

// SchemaVersion is the only schema version this package understands.
const SchemaVersion = 1

// MaxActivity is the number of characters (runes) activity text is cut to.
const MaxActivity = 512

// Kind is an event kind.
type Kind string

// The seven kinds of the contract.
const (
	KindCreated        Kind = "created"
	KindStateChanged   Kind = "state_changed"
	KindActivity       Kind = "activity"
	KindHeartbeat      Kind = "heartbeat"
	KindTerminal       Kind = "terminal"
	KindReconciliation Kind = "reconciliation"
	KindDiagnostic     Kind = "diagnostic"
)

// Kinds lists every kind in contract order.
var Kinds = []Kind{KindCreated, KindStateChanged, KindActivity, KindHeartbeat, KindTerminal, KindReconciliation, KindDiagnostic}

// Valid reports whether k is one of the seven kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindCreated, KindStateChanged, KindActivity, KindHeartbeat, KindTerminal, KindReconciliation, KindDiagnostic:
		return true
	}
	return false
}

// State is a child lifecycle state.
type State string

// The eight states of the contract.
const (
	StateCreated   State = "created"
	StateStarting  State = "starting"
	StateRunning   State = "running"
	StateWaiting   State = "waiting"
	StateCompleted State = "completed"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
	StateLost      State = "lost"
)

// States lists every state in contract order.
var States = []State{StateCreated, StateStarting, StateRunning, StateWaiting, StateCompleted, StateFailed, StateCancelled, StateLost}

// Valid reports whether s is one of the eight states.
func (s State) Valid() bool {
	switch s {
	case StateCreated, StateStarting, StateRunning, StateWaiting, StateCompleted, StateFailed, StateCancelled, StateLost:
		return true
	}
	return false
}

// Terminal reports whether s is completed, failed, cancelled or lost.
func (s State) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCancelled, StateLost:
		return true
	}
	return false
}

// Lineage is the contract's lineage object.
type Lineage struct {
	RootChildID   string `json:"rootChildId"`
	Attempt       int64  `json:"attempt"`
	External      bool   `json:"external"`
	ParentChildID string `json:"parentChildId,omitempty"`
	AdoptedAt     string `json:"adoptedAt,omitempty"`
}

// Event is the contract's LifecycleEvent. Field order follows the contract
// so that encoded lines read the same as other writers' lines.
type Event struct {
	SchemaVersion int             `json:"schemaVersion"`
	EventID       string          `json:"eventId"`
	Source        string          `json:"source"`
	SourceEpoch   string          `json:"sourceEpoch"`
	ChildID       string          `json:"childId"`
	Lineage       Lineage         `json:"lineage"`
	Kind          Kind            `json:"kind"`
	State         State           `json:"state,omitempty"`
	ObservedAt    string          `json:"observedAt"`
	Sequence      *int64          `json:"sequence,omitempty"`
	Activity      string          `json:"activity,omitempty"`
	Details       json.RawMessage `json:"details,omitempty"`
	Capabilities  Capabilities    `json:"capabilities"`
}

// Seq returns the sequence and whether the event has one.
func (e *Event) Seq() (int64, bool) {
	if e.Sequence == nil {
		return 0, false
	}
	return *e.Sequence, true
}

// Int64 returns a pointer to n, for Event.Sequence.
func Int64(n int64) *int64 { return &n }

// DetailsMap decodes Details into a map. It returns nil when there are no
// details or they cannot be decoded.
func (e *Event) DetailsMap() map[string]any {
	if len(e.Details) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(e.Details, &m) != nil {
		return nil
	}
	return m
}

// Marshal encodes the event as one line without the newline, with
// encoding/json (HTML escaping off, as every line lcwrap writes).
func (e *Event) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(512)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
