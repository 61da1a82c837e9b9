package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Coverage is a snapshot's coverage: every child ("all") or a list of
// child ids.
type Coverage struct {
	All      bool
	ChildIDs []string
}

// Covers reports whether the coverage includes childID.
func (c Coverage) Covers(childID string) bool {
	if c.All {
		return true
	}
	for _, id := range c.ChildIDs {
		if id == childID {
			return true
		}
	}
	return false
}

// MarshalJSON encodes "all" or the list of child ids.
func (c Coverage) MarshalJSON() ([]byte, error) {
	if c.All {
		return []byte(`"all"`), nil
	}
	ids := c.ChildIDs
	if ids == nil {
		ids = []string{}
	}
	return json.Marshal(ids)
}

// UnmarshalJSON accepts "all" or an array of child id strings.
func (c *Coverage) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s != "all" {
			return fmt.Errorf("coverage must be \"all\" or a list of child ids, not %q", s)
		}
		*c = Coverage{All: true}
		return nil
	}
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		return errors.New("coverage must be \"all\" or a list of child ids")
	}
	*c = Coverage{ChildIDs: ids}
	return nil
}

// SnapshotChild is one child in a snapshot.
type SnapshotChild struct {
	ChildID  string          `json:"childId"`
	State    State           `json:"state"`
	Sequence *int64          `json:"sequence,omitempty"`
	Details  json.RawMessage `json:"details,omitempty"`
}

// Snapshot is the contract's AuthoritativeSnapshot. Complete is false only
// in lcwrap's own incomplete views; reconcile refuses those.
type Snapshot struct {
	Source      string          `json:"source"`
	SourceEpoch string          `json:"sourceEpoch"`
	SnapshotID  string          `json:"snapshotId"`
	ObservedAt  string          `json:"observedAt"`
	Complete    bool            `json:"complete"`
	Coverage    Coverage        `json:"coverage"`
	Children    []SnapshotChild `json:"children"`
}

type wireSnapshot struct {
	Source      *string         `json:"source"`
	SourceEpoch *string         `json:"sourceEpoch"`
	SnapshotID  *string         `json:"snapshotId"`
	ObservedAt  *string         `json:"observedAt"`
	Complete    *bool           `json:"complete"`
	Coverage    *Coverage       `json:"coverage"`
	Children    []SnapshotChild `json:"children"`
}

// ParseSnapshot decodes and validates an AuthoritativeSnapshot. It checks
// that source, sourceEpoch, snapshotId, observedAt (strict UTC), complete
// and coverage are present, and that every child has an id and a valid
// state. It does not require complete to be true: callers decide.
func ParseSnapshot(b []byte) (Snapshot, error) {
	var w wireSnapshot
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return Snapshot{}, &SyntaxError{Reason: "snapshot is not a JSON object"}
	}
	if err := json.Unmarshal(t, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Snapshot{}, fieldErr(te.Field, "has the wrong type")
		}
		return Snapshot{}, &SyntaxError{Reason: err.Error()}
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{"source", w.Source}, {"sourceEpoch", w.SourceEpoch}, {"snapshotId", w.SnapshotID}, {"observedAt", w.ObservedAt}} {
		if f.v == nil || *f.v == "" {
			return Snapshot{}, fieldErr(f.name, "is required")
		}
	}
	if !ValidTimestamp(*w.ObservedAt) {
		return Snapshot{}, fieldErr("observedAt", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.mmm]Z")
	}
	if w.Complete == nil {
		return Snapshot{}, fieldErr("complete", "is required")
	}
	if w.Coverage == nil {
		return Snapshot{}, fieldErr("coverage", "is required (\"all\" or a list of child ids)")
	}
	for i, c := range w.Children {
		if c.ChildID == "" {
			return Snapshot{}, fieldErr(fmt.Sprintf("children[%d].childId", i), "is required")
		}
		if !c.State.Valid() {
			return Snapshot{}, fieldErr(fmt.Sprintf("children[%d].state", i), "must be one of "+joinStates())
		}
		if c.Sequence != nil && *c.Sequence < 0 {
			return Snapshot{}, fieldErr(fmt.Sprintf("children[%d].sequence", i), "must be a non-negative integer")
		}
		if d := bytes.TrimSpace(c.Details); len(d) > 0 && d[0] != '{' && !bytes.Equal(d, []byte("null")) {
			return Snapshot{}, fieldErr(fmt.Sprintf("children[%d].details", i), "must be an object")
		}
	}
	s := Snapshot{
		Source: *w.Source, SourceEpoch: *w.SourceEpoch, SnapshotID: *w.SnapshotID,
		ObservedAt: *w.ObservedAt, Complete: *w.Complete, Coverage: *w.Coverage, Children: w.Children,
	}
	if s.Children == nil {
		s.Children = []SnapshotChild{}
	}
	return s, nil
}
