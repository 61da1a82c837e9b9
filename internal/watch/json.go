package watch

import (
	"encoding/json"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Schema names the JSON shape of a transition (Transition.JSON).
const Schema = "lcwrap-watch/1"

// transitionJSON is a transition as a receiver reads it.
type transitionJSON struct {
	Schema        string               `json:"schema"`
	EventID       string               `json:"eventId"`
	Host          string               `json:"host,omitempty"`
	ChildID       string               `json:"childId"`
	State         string               `json:"state"`
	PreviousState string               `json:"previousState"`
	ObservedAt    string               `json:"observedAt"`
	Source        string               `json:"source"`
	Activity      string               `json:"activity"`
	WaitingFor    event.WaitReason     `json:"waitingFor,omitempty"`
	StaleReason   string               `json:"staleReason,omitempty"`
	Exit          *event.Exit          `json:"exit,omitempty"`
	History       bool                 `json:"history"`
	Event         json.RawMessage      `json:"event"`
	Child         projection.ChildView `json:"child"`
}

// Activity is the child's newest activity text (redacted), "" when none.
func (t *Transition) Activity() string {
	if t.View.Activity == nil {
		return ""
	}
	return t.View.Activity.Text
}

// JSON is the transition as one JSON object (schema lcwrap-watch/1): its
// facts, the event line as the journal holds it (null for stale) and the
// child as it stands after it (the row of `lcwrap status --json`).
func (t *Transition) JSON() []byte {
	j := transitionJSON{Schema: Schema, EventID: t.EventID, Host: t.Host, ChildID: t.ChildID, State: t.State,
		PreviousState: t.Previous, ObservedAt: t.ObservedAt, Source: t.Source, Activity: t.Activity(),
		WaitingFor: t.WaitingFor, Exit: t.Exit, History: t.History, Event: rawJSON(t.Event), Child: t.View}
	if t.State == StateStale {
		j.StaleReason = t.View.StaleReason
	}
	b, err := json.Marshal(j)
	if err != nil {
		// The event line is valid JSON and everything else is ours.
		j.Event = json.RawMessage("null")
		b, _ = json.Marshal(j)
	}
	return b
}

// Clone returns a copy whose Event outlives the handler.
func (t *Transition) Clone() *Transition {
	c := *t
	c.Event = append([]byte(nil), t.Event...)
	return &c
}
