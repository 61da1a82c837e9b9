package agent

import (
	"github.com/lcwrap/lcwrap/internal/event"
)

// SessionState is everything a Tracker knows about one agent session: a
// stateless producer (a hook process per payload) saves it after each
// payload and loads it for the next (see Store). It holds ids, states and
// counts, never anything from a payload but the ids.
type SessionState struct {
	// Session is the agent's session id.
	Session string `json:"session"`
	// Epoch is the sourceEpoch of this session's events when the producer
	// keeps one per session (hook mode); empty when the Tracker's emitter
	// decides.
	Epoch string `json:"epoch,omitempty"`
	// Lifecycles counts the session's lifecycles (a session resumed after
	// it ended gets a new child id).
	Lifecycles int `json:"lifecycles"`
	// Current is the session's current lifecycle (nil before the first).
	Current *ChildState `json:"current,omitempty"`
	// Agents are the sub-agents of the current lifecycle, by agent id.
	Agents map[string]*ChildState `json:"agents,omitempty"`
	// Counts are the payloads that were not turned into events, by kind.
	Counts Counts `json:"counts,omitempty"`
	// Pending are event lines the journal could not take yet (hook mode),
	// oldest first; Dropped counts those given up to stay bounded.
	Pending []string `json:"pending,omitempty"`
	Dropped int      `json:"dropped,omitempty"`
}

// ChildState is one child's lifecycle as its producer recorded it.
type ChildState struct {
	ID        string      `json:"id"`
	Parent    string      `json:"parent,omitempty"`
	Root      string      `json:"root"`
	External  bool        `json:"external,omitempty"`
	AdoptedAt string      `json:"adoptedAt,omitempty"`
	State     event.State `json:"state"`
	// Seq is the last sequence written.
	Seq int64 `json:"seq"`
	// History says the lifecycle's start was seen (history known).
	History bool `json:"history,omitempty"`
	// Lifecycles counts this sub-agent's lifecycles (for a restart).
	Lifecycles int `json:"lifecycles,omitempty"`
}

// Open reports whether the child has not ended.
func (c *ChildState) Open() bool { return c != nil && !c.State.Terminal() }

// Counts are normalization counts by kind ("unrecognized:Foo",
// "ignored:reason"), bounded by MaxCountKinds.
type Counts map[string]int

// MaxCountKinds bounds the kinds counted; more fall into OtherKind.
const MaxCountKinds = 32

// OtherKind is where kinds beyond MaxCountKinds are counted.
const OtherKind = "unrecognized:(other kinds)"

// add counts one payload of kind and reports whether it is the first of
// its kind.
func (c *Counts) add(kind string) bool {
	if *c == nil {
		*c = Counts{}
	}
	if _, ok := (*c)[kind]; !ok && len(*c) >= MaxCountKinds {
		kind = OtherKind
	}
	(*c)[kind]++
	return (*c)[kind] == 1
}
