package viewtest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lcwrap/lcwrap/internal/capabilities"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/jsonl"
)

// Scene writes events of named children with increasing sequences.
type Scene struct {
	At   time.Time // the next event's observedAt; Step advances it
	seqs map[string]int64
	Out  []jsonl.Event
}

// New starts a scene at t.
func New(t time.Time) *Scene { return &Scene{At: t, seqs: map[string]int64{}} }

// Child describes who a child is.
type Child struct {
	ID, Parent, Root string
	Attempt          int64
	Source           string // default lcwrap
	Caps             capabilities.Set
	Adopted          bool
	HeartbeatMs      int64
	Command          []string
}

// Event appends one event of c.
func (s *Scene) Event(c Child, kind jsonl.Kind, state jsonl.State, activity string, details map[string]any) jsonl.Event {
	src := c.Source
	if src == "" {
		src = "lcwrap"
	}
	root := c.Root
	if root == "" {
		root = c.ID
	}
	s.seqs[c.ID]++
	seq := s.seqs[c.ID]
	e := jsonl.Event{
		SchemaVersion: 1,
		EventID:       fmt.Sprintf("ep-%s/%s/%d", src, c.ID, seq),
		Source:        src,
		SourceEpoch:   "ep-" + src,
		ChildID:       c.ID,
		Lineage:       jsonl.Lineage{RootChildID: root, Attempt: c.Attempt, ParentChildID: c.Parent},
		Kind:          kind,
		State:         state,
		ObservedAt:    s.At.UTC().Format("2006-01-02T15:04:05.000Z"),
		Sequence:      jsonl.Int64(seq),
		Activity:      activity,
		Capabilities:  c.Caps.Normalize(),
	}
	if c.Adopted {
		e.Lineage.External = true
		e.Lineage.AdoptedAt = e.ObservedAt
	}
	if details != nil {
		b, err := json.Marshal(details)
		if err != nil {
			panic(err)
		}
		e.Details = b
	}
	s.Out = append(s.Out, e)
	s.At = s.At.Add(100 * time.Millisecond)
	return e
}

// Created appends c's created event (its command and heartbeat in
// details).
func (s *Scene) Created(c Child) {
	d := map[string]any{}
	if c.Command != nil {
		d["command"] = c.Command
	}
	if c.HeartbeatMs > 0 {
		d["heartbeatIntervalMs"] = c.HeartbeatMs
	}
	if c.Adopted {
		d["observation"] = "process-presence"
		d["pid"] = 4242
	}
	s.Event(c, jsonl.KindCreated, jsonl.StateCreated, "", d)
}

// States appends a state_changed event per state.
func (s *Scene) States(c Child, states ...jsonl.State) {
	for _, st := range states {
		s.Event(c, jsonl.KindStateChanged, st, "", nil)
	}
}

// End appends c's terminal event.
func (s *Scene) End(c Child, st jsonl.State, code int) {
	s.Event(c, jsonl.KindTerminal, st, "", map[string]any{"exit": map[string]any{"code": code}, "claim": "process-exit-status-only"})
}

// The children of the standard scene.
var (
	launched = capabilities.Launched(true).Set
	Agent    = Child{ID: "agent-1", Caps: launched, HeartbeatMs: 3600_000, Command: []string{"claude", "-p", "fix the tests", "--api-key", "sk-ant-planted0123456789abcdef"}}
	Session  = Child{ID: "session-1", Parent: "agent-1", Root: "agent-1", Source: "claude-code"}
	SubA     = Child{ID: "sub-explore", Parent: "session-1", Root: "agent-1", Source: "claude-code"}
	SubB     = Child{ID: "sub-tests", Parent: "session-1", Root: "agent-1", Source: "claude-code"}
	Build    = Child{ID: "build-7", Caps: launched, Command: []string{"make", "build"}}
	Build1   = Child{ID: "build-7-a1", Root: "build-7", Attempt: 1, Caps: launched, Command: []string{"make", "build"}}
	Tests    = Child{ID: "test-3", Caps: launched, Command: []string{"go", "test", "./..."}}
	Server   = Child{ID: "server-9", Adopted: true, Command: []string{"python3", "serve.py"}}
	Stale    = Child{ID: "fetch-2", Caps: launched, HeartbeatMs: 1000, Command: []string{"./fetch"}}
	LongID   = Child{ID: "nightly-integration-suite-with-a-very-long-identifier-0042", Caps: launched, HeartbeatMs: 3600_000}
)

// Standard is the scene every view test starts from, observed from t on;
// sub-tests ends up waiting for a permission, fetch-2 goes silent (stale
// once a second has passed three times over), build-7 fails and its retry
// completes, test-3 fails.
func Standard(t time.Time) *Scene {
	s := New(t)
	s.Created(Agent)
	s.States(Agent, jsonl.StateStarting, jsonl.StateRunning)
	s.Created(Session)
	s.States(Session, jsonl.StateStarting, jsonl.StateRunning)
	s.Event(Session, jsonl.KindActivity, "", "Read src/journal/read.go", nil)
	for _, c := range []Child{SubA, SubB} {
		s.Created(c)
		s.States(c, jsonl.StateStarting, jsonl.StateRunning)
	}
	s.Event(SubA, jsonl.KindActivity, "", "Grep: Follow", nil)
	s.Event(SubB, jsonl.KindActivity, "", "permission: Bash rm -rf build/", nil)
	s.States(SubB, jsonl.StateWaiting)
	s.Created(Build)
	s.States(Build, jsonl.StateStarting, jsonl.StateRunning)
	s.End(Build, jsonl.StateFailed, 2)
	s.Created(Build1)
	s.States(Build1, jsonl.StateStarting, jsonl.StateRunning)
	s.End(Build1, jsonl.StateCompleted, 0)
	s.Created(Tests)
	s.States(Tests, jsonl.StateStarting, jsonl.StateRunning)
	s.Event(Tests, jsonl.KindActivity, "", "--- FAIL: TestFollow", nil)
	s.End(Tests, jsonl.StateFailed, 1)
	s.Created(Server)
	s.Event(Server, jsonl.KindDiagnostic, "", "", map[string]any{"message": "presence only: no state, history, heartbeat, cause or cancel"})
	s.Created(Stale)
	s.States(Stale, jsonl.StateStarting, jsonl.StateRunning)
	s.Created(LongID)
	s.States(LongID, jsonl.StateStarting, jsonl.StateRunning)
	return s
}

// Lines encodes events as lines (no journalSequence).
func Lines(evs []jsonl.Event) [][]byte {
	out := make([][]byte, len(evs))
	for i := range evs {
		b, err := evs[i].Marshal()
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

// Append appends events to the journal at path.
func Append(path string, evs []jsonl.Event) error {
	j, err := journal.Open(path, journal.Options{})
	if err != nil {
		return err
	}
	defer j.Close()
	_, err = j.Append(Lines(evs), false)
	return err
}
