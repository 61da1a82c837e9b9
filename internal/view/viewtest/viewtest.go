package viewtest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/view"
)

// Scene writes events of named children with increasing sequences.
type Scene struct {
	At   time.Time // the next event's observedAt; Step advances it
	seqs map[string]int64
	Out  []event.Event
}

// New starts a scene at t.
func New(t time.Time) *Scene { return &Scene{At: t, seqs: map[string]int64{}} }

// Child describes who a child is.
type Child struct {
	ID, Parent, Root string
	Attempt          int64
	Source           string // default lcwrap
	Caps             event.Capabilities
	Adopted          bool
	HeartbeatMs      int64
	Command          []string
}

// Event appends one event of c.
func (s *Scene) Event(c Child, kind event.Kind, state event.State, activity string, details map[string]any) event.Event {
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
	e := event.Event{
		SchemaVersion: 1,
		EventID:       fmt.Sprintf("ep-%s/%s/%d", src, c.ID, seq),
		Source:        src,
		SourceEpoch:   "ep-" + src,
		ChildID:       c.ID,
		Lineage:       event.Lineage{RootChildID: root, Attempt: c.Attempt, ParentChildID: c.Parent},
		Kind:          kind,
		State:         state,
		ObservedAt:    s.At.UTC().Format("2006-01-02T15:04:05.000Z"),
		Sequence:      event.Int64(seq),
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
	s.Event(c, event.KindCreated, event.StateCreated, "", d)
}

// States appends a state_changed event per state.
func (s *Scene) States(c Child, states ...event.State) {
	for _, st := range states {
		s.Event(c, event.KindStateChanged, st, "", nil)
	}
}

// End appends c's terminal event.
func (s *Scene) End(c Child, st event.State, code int) {
	s.Event(c, event.KindTerminal, st, "", map[string]any{"exit": map[string]any{"code": code}, "claim": "process-exit-status-only"})
}

// The children of the standard scene.
var (
	launched = event.Launched(true).Set
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
	s.States(Agent, event.StateStarting, event.StateRunning)
	s.Created(Session)
	s.States(Session, event.StateStarting, event.StateRunning)
	s.Event(Session, event.KindActivity, "", "Read src/journal/read.go", nil)
	for _, c := range []Child{SubA, SubB} {
		s.Created(c)
		s.States(c, event.StateStarting, event.StateRunning)
	}
	s.Event(SubA, event.KindActivity, "", "Grep: Follow", nil)
	s.Event(SubB, event.KindActivity, "", "permission: Bash rm -rf build/", nil)
	s.States(SubB, event.StateWaiting)
	s.Created(Build)
	s.States(Build, event.StateStarting, event.StateRunning)
	s.End(Build, event.StateFailed, 2)
	s.Created(Build1)
	s.States(Build1, event.StateStarting, event.StateRunning)
	s.End(Build1, event.StateCompleted, 0)
	s.Created(Tests)
	s.States(Tests, event.StateStarting, event.StateRunning)
	s.Event(Tests, event.KindActivity, "", "--- FAIL: TestFollow", nil)
	s.End(Tests, event.StateFailed, 1)
	s.Created(Server)
	s.Event(Server, event.KindDiagnostic, "", "", map[string]any{"message": "presence only: no state, history, heartbeat, cause or cancel"})
	s.Created(Stale)
	s.States(Stale, event.StateStarting, event.StateRunning)
	s.Created(LongID)
	s.States(LongID, event.StateStarting, event.StateRunning)
	return s
}

// Lines encodes events as lines (no journalSequence).
func Lines(evs []event.Event) [][]byte {
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
func Append(path string, evs []event.Event) error {
	j, err := journal.Open(path, journal.Options{})
	if err != nil {
		return err
	}
	defer j.Close()
	_, err = j.Append(Lines(evs), false)
	return err
}

// Model is the live model of a scene, synced at now.
func Model(t testing.TB, s *Scene, now time.Time) *view.Model {
	t.Helper()
	m := view.NewModel()
	for i, raw := range Lines(s.Out) {
		m.Apply(&s.Out[i], raw, int64(i+1))
	}
	m.Sync(now)
	return m
}
